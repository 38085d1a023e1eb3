import type { Updateable } from 'kysely'
import type { ServiceContext } from '../../context.js'
import type { MembershipsTable } from '../../db/schema.js'
import { invalidField } from '../../errors.js'
import { extensionsFor, resolveActiveExtension, toExtensionRecord } from './extensions.js'
import { isMember, type MembershipRecordRow } from './memberships.repository.js'
import type { ExtensionRecord, UpdateMembershipInput } from './memberships.schemas.js'

/** A membership's profile as a change sets it (membership-update.ts): its fields, checked. */

/** The profile fields: identity provider, SSO-only, extensions, the active one, supervisor, workstation. */
export function applyProfile(
  changes: Updateable<MembershipsTable>,
  current: MembershipRecordRow,
  input: UpdateMembershipInput,
  nextStatus: MembershipRecordRow['status'],
): ExtensionRecord[] {
  if (input.noPassword !== undefined) changes.no_password = input.noPassword
  if (input.defaultIdentityProvider !== undefined) {
    changes.default_identity_provider = input.defaultIdentityProvider?.toLowerCase() ?? null
  }
  if (input.workStationId !== undefined) changes.work_station_id = input.workStationId ?? ''
  if (input.supervisorId !== undefined) changes.supervisor_id = input.supervisorId?.toLowerCase() ?? null

  const extensions = input.extensions
    ? extensionsFor(current.user_id, input.extensions)
    : current.extensions.map(toExtensionRecord)
  if (input.extensions) changes.extensions = JSON.stringify(extensions)
  let active: ExtensionRecord | null = current.active_extension
    ? toExtensionRecord(current.active_extension)
    : null
  if (input.activeExtension !== undefined) {
    if (input.activeExtension !== null && nextStatus !== 'accepted' && nextStatus !== 'disabled') {
      throw invalidField('activeExtension', 'can be set once the user has accepted the invitation')
    }
    active = input.activeExtension === null ? null : resolveActiveExtension(input.activeExtension, extensions)
    changes.active_extension = active ? JSON.stringify(active) : null
  } else if (
    input.extensions &&
    active &&
    !extensions.some((e) => e.type === active?.type && e.value === active?.value)
  ) {
    // The active extension was removed from the list: fall back to the default one.
    active = extensions[0] ?? null
    changes.active_extension = active ? JSON.stringify(active) : null
  }
  if (changes.active_extension !== undefined || input.extensions) {
    changes.extension = (active ?? extensions[0])?.value ?? ''
  }
  return extensions
}

export async function checkSupervisor(
  ctx: ServiceContext,
  key: { tenantId: string; userId: string },
  supervisorId: string,
): Promise<void> {
  if (supervisorId.toLowerCase() === key.userId)
    throw invalidField('supervisorId', 'cannot be the user itself')
  if (!(await isMember(ctx.db, key.tenantId, supervisorId.toLowerCase()))) {
    throw invalidField('supervisorId', 'is not a user of this tenant')
  }
}
