import type { Kysely } from 'kysely'
import type { Database, MembershipRow } from '../../db/schema.js'
import { extensionsFor, resolveActiveExtension, toExtensionRecord } from './extensions.js'
import { findMembership } from './memberships.repository.js'
import type { UpdateMembershipInput } from './memberships.schemas.js'

/**
 * What a membership body actually changes (docs/api.md#passwords-and-the-existing-clients-flows), for the paths that judge a body by what their
 * credential may do — the invitation token and a user accepting its own invitation, each allowed only
 * `status: "accepted"`. Null means empty, and a field repeating its stored value is not a change: a
 * client sending the whole record back with `"status": "accepted"` is judged on the status alone.
 */
export function changedMembershipFields(current: MembershipRow, input: UpdateMembershipInput): string[] {
  return Object.keys(input).filter(
    (key) =>
      input[key as keyof UpdateMembershipInput] !== undefined && !repeatsStoredValue(current, input, key),
  )
}

/**
 * Whether the body asks only to accept the membership: `status: "accepted"` and nothing else that differs
 * from the stored membership (read only when the body holds more than the status).
 */
export async function asksOnlyAcceptance(
  db: Kysely<Database>,
  tenantId: string,
  userId: string,
  input: UpdateMembershipInput,
): Promise<boolean> {
  if (input.status !== 'accepted') return false
  const others = Object.entries(input).filter(([key, value]) => key !== 'status' && value !== undefined)
  if (others.length === 0) return true
  const current = await findMembership(db, tenantId.toLowerCase(), userId.toLowerCase())
  return current !== undefined && changedMembershipFields(current, input).every((key) => key === 'status')
}

function repeatsStoredValue(current: MembershipRow, input: UpdateMembershipInput, key: string): boolean {
  switch (key) {
    case 'status':
      return input.status === current.status
    case 'roleId':
      return input.roleId?.toLowerCase() === current.role_id
    case 'noPassword':
      return (input.noPassword ?? null) === current.no_password
    case 'defaultIdentityProvider':
      return (input.defaultIdentityProvider?.toLowerCase() ?? null) === current.default_identity_provider
    case 'supervisorId':
      return (input.supervisorId?.toLowerCase() ?? null) === current.supervisor_id
    case 'workStationId':
      return (input.workStationId ?? '') === current.work_station_id
    case 'extensions':
      return sameJson(extensionsFor(current.user_id, input.extensions), storedExtensions(current))
    case 'activeExtension':
      return sameActiveExtension(current, input.activeExtension)
    default:
      return false
  }
}

function storedExtensions(current: MembershipRow) {
  return current.extensions.map(toExtensionRecord)
}

function sameActiveExtension(current: MembershipRow, requested: UpdateMembershipInput['activeExtension']) {
  if (requested === null || requested === undefined) return current.active_extension === null
  if (current.active_extension === null) return false
  try {
    const resolved = resolveActiveExtension(requested, storedExtensions(current))
    return sameJson(resolved, toExtensionRecord(current.active_extension))
  } catch {
    // Not one of the stored extensions: a change (which the caller's rules then judge).
    return false
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}
