import { type Static, Type } from 'typebox'
import { ROLE_IDS } from '../../access/permissions.js'
import { Body, ErrorReasonSchema, Uuid } from '../../http/schemas.js'
import { CREATE_STATUSES } from '../memberships/memberships.schemas.js'
import { CreateUserBody, UserSchema } from '../users/users.schemas.js'

/** Bulk load of platform users (docs/api.md#bulk-load-of-platform-users). */

/** A JSON array body holds at most this many users; an NDJSON stream has no limit. */
export const MAX_BULK_ITEMS = 1000

/** `?dryRun` of the bulk forms (read by bulk-forms.ts, documented by bulk-openapi.ts), and the summary's mark. */
export const DryRun = Type.Boolean({
  description: 'A dry run: every row validated (e-mail collisions included), nothing written',
})

/**
 * One bulk row: the single-create body, field for field (one schema, so a row is judged exactly as a
 * single create is), plus an optional membership in one tenant.
 */
export const BulkUserItem = Body(
  {
    ...CreateUserBody.properties,
    tenantId: Type.Optional(Uuid({ description: 'Makes the new user a member of this tenant' })),
    tenantRoleId: Type.Optional(
      Uuid({ description: 'The tenant role of that membership (required with tenantId)' }),
    ),
    tenantStatus: Type.Optional(
      Type.Enum(CREATE_STATUSES, {
        type: 'string',
        description: 'pending (default, no e-mail) | invited (invitation e-mail queued) | accepted',
      }),
    ),
  },
  {
    examples: [
      {
        email: 'sam.lee@acme.example',
        roleId: ROLE_IDS.platformUser,
        firstName: 'Sam',
        lastName: 'Lee',
        tenantId: '0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f',
        tenantRoleId: ROLE_IDS.agent,
        tenantStatus: 'invited',
      },
    ],
  },
)
export type BulkUserInput = Static<typeof BulkUserItem>

/** The error-body shape of docs/api.md#conventions, per row (the request id is the response's). */
export const BulkItemError = Type.Object({
  code: Type.Integer({ description: 'The HTTP status this row would get on its own' }),
  reason: ErrorReasonSchema,
  message: Type.String(),
  attribute: Type.Optional(Type.Record(Type.String(), Type.String())),
})

export const BulkItemResult = Type.Object({
  index: Type.Integer({ description: 'Position of the row in the input, from 0' }),
  status: Type.Integer({ description: '201 created, 200 valid (dry run), or the 4xx of `error`' }),
  result: Type.Optional(UserSchema),
  error: Type.Optional(BulkItemError),
})
export type BulkItemResult = Static<typeof BulkItemResult>

export const BulkSummary = Type.Object({
  total: Type.Integer(),
  created: Type.Integer(),
  failed: Type.Integer(),
  dryRun: Type.Optional(DryRun),
})
export type BulkSummary = Static<typeof BulkSummary>

export const BulkResponse = Type.Object({
  result: Type.Array(BulkItemResult),
  summary: BulkSummary,
})

/**
 * One line of the NDJSON answer: a row's result (BulkItemResult's fields, so the user is UserSchema itself),
 * with the 1-based line number it came from. Field order is the serializer's order (serialization.ts).
 */
const { index, status, result, error } = BulkItemResult.properties
export const BulkResultLine = Type.Object({
  index,
  line: Type.Integer({ description: 'Line number in the request body, from 1' }),
  status,
  result,
  error,
})

/** The last NDJSON line: the summary, or — when the stream had to stop — the error that stopped it. */
export const BulkSummaryLine = Type.Object({ summary: BulkSummary })
export const BulkAbortLine = Type.Object({
  error: Type.Object({
    code: Type.Integer(),
    reason: ErrorReasonSchema,
    message: Type.String(),
    requestId: Type.Optional(Type.String()),
  }),
})
