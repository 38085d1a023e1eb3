import { AppError } from '../../errors.js'

/** SCIM's error types (RFC 7644 §3.12) that this endpoint answers. */
export type ScimType =
  | 'invalidFilter'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'mutability'
  | 'uniqueness'
  | 'tooMany'

export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error'

/** A failure answered in SCIM's error shape (docs/scim.md: schemas, status, scimType?, detail, nothing else). */
export class ScimError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly scimType?: ScimType,
    readonly headers?: Record<string, string>,
  ) {
    super(detail)
    this.name = 'ScimError'
  }
}

export const invalidValue = (detail: string) => new ScimError(400, detail, 'invalidValue')
export const invalidFilter = (detail: string) => new ScimError(400, detail, 'invalidFilter')
export const invalidPath = (detail: string) => new ScimError(400, detail, 'invalidPath')
export const uniqueness = (detail: string) => new ScimError(409, detail, 'uniqueness')
export const scimNotFound = (what = 'Resource') => new ScimError(404, `${what} not found`)

export interface ScimErrorBody {
  schemas: [typeof ERROR_SCHEMA]
  status: string
  scimType?: ScimType
  detail: string
}

export function scimErrorBody(error: ScimError): ScimErrorBody {
  return {
    schemas: [ERROR_SCHEMA],
    status: String(error.status),
    ...(error.scimType ? { scimType: error.scimType } : {}),
    detail: error.detail,
  }
}

/**
 * The services' AppErrors (memberships, users, idempotency, limits) in SCIM's terms: the status stays,
 * a 400 is `invalidValue` and a conflict `uniqueness`; the detail is the service's own message.
 */
export function fromAppError(error: AppError): ScimError {
  const status = error.statusCode
  let scimType: ScimType | undefined
  if (status === 400) scimType = 'invalidValue'
  else if (
    status === 409 &&
    error.reason !== 'idempotency_key_reused' &&
    error.reason !== 'invalid_state_transition'
  )
    scimType = 'uniqueness'
  else if (status === 413 && error.reason === 'too_many_items') scimType = 'tooMany'
  const detail =
    status >= 500 ? 'An internal error occurred; quote the X-Request-Id when reporting it' : error.message
  return new ScimError(status, detail, scimType, error.headers)
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError
}
