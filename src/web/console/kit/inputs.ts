import { type TProperties, Type } from 'typebox'
import { Uuid } from '../../../http/schemas.js'

/**
 * What the console's routes accept (docs/console.md "Inputs and refusals"): TypeBox schemas like the API's, hidden
 * from the OpenAPI document and checked by the same validator before any handler runs. A path names
 * records by UUID (a malformed one is the "Not found" page, no API call made). A form posts strings: a
 * checkbox is absent or 'on', a choice is one of the values the form offers, and what a person types is
 * bounded far above the API's own limits — so a value the API refuses is shown beside its field, and only
 * a post that no console form makes is refused here, with the 400 page.
 */

/** The longest value a person may type in one field; the API's longest field holds 1,000 characters. */
export const TYPED_LIMIT = 4_096

/** What a person types or pastes into one field, up to `maxLength` characters. */
export const Typed = (maxLength = TYPED_LIMIT) =>
  Type.Optional(
    Type.String({
      maxLength,
      errorMessage: `is longer than the console accepts (at most ${maxLength} characters)`,
    }),
  )

/** A checkbox: 'on' when ticked, absent when not. */
export const Checkbox = Type.Optional(Type.Literal('on'))

/** One of the values a form offers (a select, radio buttons or a hidden field). */
export const OneOf = <const Values extends string[]>(values: readonly [...Values]) =>
  Type.Optional(Type.Enum(values))

/** A record chosen in a form (a role, a parent tenant): its id, or '' when none was chosen. */
export const ChosenId = Type.Optional(Type.Union([Uuid(), Type.Literal('')]))

/** An opaque page cursor of the API, passed back as it came; the API refuses a stale or forged one. */
export const Cursor = Typed(1_024)

/**
 * The fields of a form: its own plus the form id and token every post carries (checked before this,
 * kit/form-token.ts) and the version (the ETag) an edit form was drawn from. Fields a form does not have
 * are dropped, as the API drops a body's unknown fields.
 */
export const Form = <T extends TProperties>(properties: T) =>
  Type.Object(
    { ...properties, formId: Typed(64), formToken: Typed(128), version: Typed(256) },
    { additionalProperties: false },
  )

/**
 * A form whose field names are made from data (an integration type's settings, a SCIM group's row):
 * its other fields are strings of at most `maxLength` characters.
 */
export const OpenForm = <T extends TProperties>(properties: T, maxLength = TYPED_LIMIT) =>
  Type.Intersect([
    Type.Object({ ...properties, formId: Typed(64), formToken: Typed(128), version: Typed(256) }),
    Type.Record(
      Type.String(),
      Type.String({
        maxLength,
        errorMessage: `is longer than the console accepts (at most ${maxLength} characters)`,
      }),
    ),
  ])

/** A query string: a page's filters and its cursor; parameters a page does not take are dropped. */
export const Query = <T extends TProperties>(properties: T) =>
  Type.Object(properties, { additionalProperties: false })

/** A notice named in the query after a change (`?done=saved`); one a page does not know shows nothing. */
export const Done = Typed(64)

/** The path of a page under a tenant. */
export const TenantPath = Type.Object({ tenantId: Uuid() })

/** The path of a tenant's record: the tenant, and the record by `name`. */
export const RecordPath = <Name extends string>(name: Name) =>
  Type.Object({ tenantId: Uuid(), ...({ [name]: Uuid() } as { [K in Name]: ReturnType<typeof Uuid> }) })

/** The "Not found" of a path id that is no UUID, by the path's name for it (the tenant first). */
export const NOT_FOUND: Record<string, string> = {
  tenantId: 'No such tenant',
  userId: 'No such user',
  memberId: 'No such member',
  roleId: 'No such role',
  keyId: 'No such API key',
  groupId: 'No such group',
  webhookId: 'No such webhook',
  deliveryId: 'No such delivery',
  integrationId: 'No such integration',
  providerId: 'No such identity provider',
  testId: 'No such test sign-in',
  factorId: 'No such second factor',
  sessionId: 'No such session',
}
