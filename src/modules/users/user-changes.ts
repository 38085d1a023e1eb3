import type { UserRow } from '../../db/schema.js'
import type { UpdateUserInput } from './users.schemas.js'

/**
 * What a user body actually changes (docs/api.md#platform-users). Every path that judges a body against what its
 * credential may do — self-service, the invitation token, the password-reset token — asks this, so two
 * rules hold everywhere alike: "null means empty" (null and "" are the same for the text fields) and
 * "unchanged fields are not changes" (clients send whole records back; a field repeating its stored
 * value is judged as absent).
 */
export function changedUserFields(target: UserRow, input: UpdateUserInput): string[] {
  return Object.keys(input).filter(
    (key) => input[key as keyof UpdateUserInput] !== undefined && !repeatsStoredValue(target, input, key),
  )
}

/** Whether the body repeats the stored value of `key`. A password is always a change. */
function repeatsStoredValue(target: UserRow, input: UpdateUserInput, key: string): boolean {
  switch (key) {
    case 'firstName':
      return (input.firstName ?? '') === target.first_name
    case 'lastName':
      return (input.lastName ?? '') === target.last_name
    case 'externalId':
      return (input.externalId ?? '') === target.external_id
    case 'personalTelephone':
      return (input.personalTelephone || null) === target.personal_telephone
    case 'defaultTenant':
      return (input.defaultTenant?.toLowerCase() ?? null) === target.default_tenant
    case 'roleId':
      return input.roleId?.toLowerCase() === target.role_id
    case 'status':
      return input.status === target.status
    case 'additionalRoleIds':
      return (
        JSON.stringify((input.additionalRoleIds ?? []).map((id) => id.toLowerCase()).sort()) ===
        JSON.stringify([...target.additional_role_ids].sort())
      )
    case 'resetPassword':
      return input.resetPassword === false
    default:
      return false
  }
}
