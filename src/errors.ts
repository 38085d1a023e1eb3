/**
 * The closed list of error reasons (docs/api.md#conventions). Every failure the service answers names one of these;
 * the OpenAPI document publishes the list. Add a reason here, nowhere else.
 */
export const ERROR_REASONS = {
  validation_failed: 400,
  invalid_json: 400,
  unauthorized: 401,
  mfa_required: 401,
  reauthentication_required: 401,
  reset_token_expired: 401,
  permission_denied: 403,
  role_exceeds_caller: 403,
  sso_required: 403,
  not_found: 404,
  tenant_not_found: 404,
  user_not_found: 404,
  role_not_found: 404,
  region_not_found: 404,
  integration_not_found: 404,
  api_key_not_found: 404,
  invitation_not_found: 404,
  identity_provider_not_found: 404,
  webhook_not_found: 404,
  webhook_delivery_not_found: 404,
  sso_test_not_found: 404,
  session_not_found: 404,
  factor_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  tenant_name_taken: 409,
  email_taken: 409,
  already_member: 409,
  integration_exists: 409,
  integration_name_taken: 409,
  role_name_taken: 409,
  role_read_only: 409,
  idempotency_key_reused: 409,
  invalid_state_transition: 409,
  self_lockout: 409,
  last_platform_administrator: 409,
  scim_key_limit: 409,
  scim_user_name_taken: 409,
  scim_email_taken: 409,
  scim_group_name_taken: 409,
  mfa_required_by_policy: 409,
  invitation_expired: 410,
  precondition_failed: 412,
  payload_too_large: 413,
  too_many_items: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  service_unavailable: 503,
  database_unavailable: 503,
} as const

export type ErrorReason = keyof typeof ERROR_REASONS

/**
 * Reasons also answered with another status than ERROR_REASONS' (docs/api.md#conventions): `mfa_required`
 * is 401 when signing in (a second factor is asked for) and 403 in a tenant whose policy needs one (the
 * token is valid but not enough there, as `sso_required`).
 */
export const ERROR_REASON_OTHER_STATUSES: Partial<Record<ErrorReason, readonly number[]>> = {
  mfa_required: [403],
}

/**
 * What a sign-in asks next (docs/security.md, "Second factors"): the challenge's single-use token, the
 * kinds of factor the account can answer with, and the WebAuthn request options when it has a passkey.
 */
export interface MfaChallengeBody {
  token: string
  factors: Array<'totp' | 'webauthn' | 'recovery'>
  webauthn?: Record<string, unknown>
}

/** Field name → what is wrong with it. */
export type Attribute = Record<string, string>

export interface ErrorBody {
  error: {
    code: number
    reason: ErrorReason
    message: string
    attribute?: Attribute
    requestId?: string
    /** With `mfa_required` and `reauthentication_required`: the second factor to send. */
    mfa?: MfaChallengeBody
  }
}

/** What an AppError may carry beyond its reason and message. */
export interface AppErrorOptions {
  /** Another status the reason is answered with (ERROR_REASON_OTHER_STATUSES), instead of its own. */
  status?: number
  mfa?: MfaChallengeBody
}

export class AppError extends Error {
  readonly statusCode: number
  constructor(
    readonly reason: ErrorReason,
    message: string,
    readonly attribute?: Attribute,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers?: Record<string, string>,
    readonly options: AppErrorOptions = {},
  ) {
    super(message)
    this.name = 'AppError'
    const { status } = options
    if (status !== undefined && !ERROR_REASON_OTHER_STATUSES[reason]?.includes(status))
      throw new Error(`${reason} is never answered with ${status}`)
    this.statusCode = status ?? ERROR_REASONS[reason]
  }
}

/** 400 for one field: the most common failure, spelt once. */
export function invalidField(field: string, problem: string, message?: string): AppError {
  return new AppError('validation_failed', message ?? `${field} ${problem}`, { [field]: problem })
}

export function errorBody(error: AppError, requestId?: string): ErrorBody {
  return {
    error: {
      code: error.statusCode,
      reason: error.reason,
      message: error.message,
      ...(error.attribute ? { attribute: error.attribute } : {}),
      ...(requestId ? { requestId } : {}),
      ...(error.options.mfa ? { mfa: error.options.mfa } : {}),
    },
  }
}
