import { type Insertable, type Kysely, type Selectable, sql, type Transaction } from 'kysely'
import { withConstraintErrors } from '../../db/constraint-errors.js'
import type { Database, ScimGroupsTable, ScimSettingsTable, ScimUsersTable } from '../../db/schema.js'

/**
 * SQL for the scim module's own tables (migration 0013). Every row is addressed by its tenant. A write
 * that meets one of their keys fails with its domain error (db/constraint-errors.ts), which SCIM answers
 * as 409 `uniqueness` (docs/scim.md).
 */

type Executor = Kysely<Database> | Transaction<Database>
export type ScimUserRow = Selectable<ScimUsersTable>
export type ScimGroupRow = Selectable<ScimGroupsTable>
export type ScimSettingsRow = Selectable<ScimSettingsTable>

export async function findSettings(db: Executor, tenantId: string): Promise<ScimSettingsRow | undefined> {
  return db.selectFrom('scim_settings').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst()
}

export async function saveSettings(db: Executor, row: Insertable<ScimSettingsTable>): Promise<void> {
  await db
    .insertInto('scim_settings')
    .values(row)
    .onConflict((oc) =>
      oc.column('tenant_id').doUpdateSet({
        default_role_id: row.default_role_id,
        updated: row.updated,
        updated_by: row.updated_by,
      }),
    )
    .execute()
}

export async function findScimUser(db: Executor, tenantId: string, userId: string) {
  return db
    .selectFrom('scim_users')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
}

/** Index look-ups (docs/scim.md#compliance-and-scale): by userName, e-mail or externalId. */
export async function findScimUsersBy(
  db: Executor,
  tenantId: string,
  by: { userNameKey: string } | { emailKey: string } | { externalId: string },
): Promise<ScimUserRow[]> {
  let query = db.selectFrom('scim_users').selectAll().where('tenant_id', '=', tenantId)
  if ('userNameKey' in by) query = query.where('user_name_key', '=', by.userNameKey)
  else if ('emailKey' in by) query = query.where('email_key', '=', by.emailKey)
  else query = query.where('external_id', '=', by.externalId)
  return query.execute()
}

export async function listScimUsers(
  db: Executor,
  tenantId: string,
  userIds?: string[],
): Promise<ScimUserRow[]> {
  if (userIds && userIds.length === 0) return []
  let query = db.selectFrom('scim_users').selectAll().where('tenant_id', '=', tenantId)
  if (userIds) query = query.where('user_id', 'in', userIds)
  return query.execute()
}

export async function insertScimUser(db: Executor, row: Insertable<ScimUsersTable>): Promise<void> {
  await withConstraintErrors(() => db.insertInto('scim_users').values(row).execute(), scimKeys(row))
}

/** What a SCIM row's key errors name. */
function scimKeys(row: { user_name: string; email_key?: string | null | undefined }) {
  return { userName: row.user_name, email: row.email_key ?? undefined }
}

export async function updateScimUser(
  db: Executor,
  tenantId: string,
  userId: string,
  changes: Pick<
    ScimUserRow,
    'user_name' | 'user_name_key' | 'email_key' | 'external_id' | 'active' | 'updated'
  > & {
    attributes: string
  },
): Promise<void> {
  const update = db
    .updateTable('scim_users')
    .set({ ...changes, version: sql`version + 1` })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
  await withConstraintErrors(() => update.execute(), scimKeys(changes))
}

export async function bumpScimUserVersion(db: Executor, tenantId: string, userIds: string[]): Promise<void> {
  if (userIds.length === 0) return
  await db
    .updateTable('scim_users')
    .set({ version: sql`version + 1` })
    .where('tenant_id', '=', tenantId)
    .where('user_id', 'in', userIds)
    .execute()
}

export async function insertGroup(db: Executor, row: Insertable<ScimGroupsTable>): Promise<void> {
  await withConstraintErrors(() => db.insertInto('scim_groups').values(row).execute(), {
    name: row.display_name,
  })
}

export async function findGroup(
  db: Executor,
  tenantId: string,
  id: string,
): Promise<ScimGroupRow | undefined> {
  return db
    .selectFrom('scim_groups')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

export async function findGroupsBy(
  db: Executor,
  tenantId: string,
  by: { displayNameKey: string } | { externalId: string } | { memberId: string },
): Promise<ScimGroupRow[]> {
  let query = db.selectFrom('scim_groups').selectAll().where('tenant_id', '=', tenantId)
  if ('displayNameKey' in by) query = query.where('display_name_key', '=', by.displayNameKey)
  else if ('externalId' in by) query = query.where('external_id', '=', by.externalId)
  else
    query = query.where('id', 'in', (eb) =>
      eb
        .selectFrom('scim_group_members')
        .select('group_id')
        .where('tenant_id', '=', tenantId)
        .where('user_id', '=', by.memberId),
    )
  return query.execute()
}

export async function listGroups(db: Executor, tenantId: string): Promise<ScimGroupRow[]> {
  return db
    .selectFrom('scim_groups')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .orderBy('created')
    .orderBy('id')
    .execute()
}

export async function updateGroup(
  db: Executor,
  tenantId: string,
  id: string,
  changes: Partial<
    Pick<ScimGroupRow, 'display_name' | 'display_name_key' | 'external_id' | 'role_id' | 'priority'>
  > & {
    updated: Date
  },
): Promise<void> {
  const update = db
    .updateTable('scim_groups')
    .set({ ...changes, version: sql`version + 1` })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
  await withConstraintErrors(() => update.execute(), { name: changes.display_name })
}

export async function deleteGroup(db: Executor, tenantId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('scim_groups')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** group id → member user ids, for the given groups (all of the tenant's when omitted). */
export async function groupMembers(
  db: Executor,
  tenantId: string,
  groupIds?: string[],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  if (groupIds && groupIds.length === 0) return out
  let query = db
    .selectFrom('scim_group_members')
    .select(['group_id', 'user_id'])
    .where('tenant_id', '=', tenantId)
  if (groupIds) query = query.where('group_id', 'in', groupIds)
  for (const row of await query.orderBy('user_id').execute()) {
    const list = out.get(row.group_id) ?? []
    list.push(row.user_id)
    out.set(row.group_id, list)
  }
  return out
}

/** user id → the groups it is in (id, name, role mapping), for the given users. */
export async function groupsOfUsers(
  db: Executor,
  tenantId: string,
  userIds: string[],
): Promise<Map<string, Pick<ScimGroupRow, 'id' | 'display_name' | 'role_id' | 'priority'>[]>> {
  const out = new Map<string, Pick<ScimGroupRow, 'id' | 'display_name' | 'role_id' | 'priority'>[]>()
  if (userIds.length === 0) return out
  const rows = await db
    .selectFrom('scim_group_members as m')
    .innerJoin('scim_groups as g', (join) =>
      join.onRef('g.tenant_id', '=', 'm.tenant_id').onRef('g.id', '=', 'm.group_id'),
    )
    .select(['m.user_id', 'g.id', 'g.display_name', 'g.role_id', 'g.priority'])
    .where('m.tenant_id', '=', tenantId)
    .where('m.user_id', 'in', userIds)
    .orderBy('g.created')
    .execute()
  for (const row of rows) {
    const list = out.get(row.user_id) ?? []
    list.push({ id: row.id, display_name: row.display_name, role_id: row.role_id, priority: row.priority })
    out.set(row.user_id, list)
  }
  return out
}

export async function setGroupMembers(
  db: Executor,
  tenantId: string,
  groupId: string,
  add: string[],
  remove: string[],
): Promise<void> {
  if (remove.length > 0) {
    await db
      .deleteFrom('scim_group_members')
      .where('tenant_id', '=', tenantId)
      .where('group_id', '=', groupId)
      .where('user_id', 'in', remove)
      .execute()
  }
  if (add.length > 0) {
    const insert = db
      .insertInto('scim_group_members')
      .values(add.map((user_id) => ({ tenant_id: tenantId, group_id: groupId, user_id })))
      .onConflict((oc) => oc.doNothing())
    // A member removed from the tenant meanwhile fails the membership's foreign key: 400.
    await withConstraintErrors(() => insert.execute())
  }
}

/** Whether any group of the tenant is mapped to a role: until one is, SCIM never changes roles. */
export async function anyGroupMapped(db: Executor, tenantId: string): Promise<boolean> {
  const row = await db
    .selectFrom('scim_groups')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('role_id', 'is not', null)
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}
