import { type Kysely, type RawBuilder, type SqlBool, sql, type Transaction, type Updateable } from 'kysely'
import { containsPattern } from '../../db/contains-pattern.js'
import { keysetPage } from '../../db/keyset.js'
import { recordRow } from '../../db/row-inserts.js'
import { nextUpdated } from '../../db/row-version.js'
import type { Database, NewUserRow, UserRow, UsersTable } from '../../db/schema.js'
import { ifMatchChecked, ifMatchUpdated } from '../../http/request-context.js'
import type { AuditEvent } from '../../outbox/audit-event.js'
import { recordInsert, type UnitInsert, type UnitRow } from '../../outbox/write-unit.js'

/** SQL for platform users. Each function takes the executor (db or transaction) first. */

type Executor = Kysely<Database> | Transaction<Database>

/**
 * A new user and its `user.created` event, written by the write unit (outbox/write-unit.ts) and answering
 * the stored row. A taken e-mail is email_taken.
 */
export function userInsert(row: NewUserRow, event: AuditEvent): UnitInsert<UserRow> {
  return recordInsert<UserRow>('users', row, {
    event,
    returning: '*',
    uniqueKey: row.email.toLowerCase(),
    constraints: { email: row.email },
  })
}

/**
 * A new user and its `user.created` event as one row of another record's write (a membership's, whose
 * user is new: memberships/membership-write.ts), relation `new_user`.
 */
export function newUserRow(row: NewUserRow, event: AuditEvent): UnitRow {
  return { ...recordRow('users', row, { as: 'new_user', returning: 'id' }), audit: { event } }
}

/** A user row as reads return it: with the delivery state of its live password-reset link's mail. */
export type UserReadRow = UserRow & { reset_mail_status: string | null }

/** Only while a link is live; the index outbox_password_reset_idx (migration 0004) finds the mail. */
const resetMailStatus = sql<string | null>`(case when u.reset_password_expiry_date is null then null else (
  select o.status from outbox o where o.kind = 'password_reset_email' and o.payload->>'userId' = u.id::text
  order by o.created desc limit 1) end)`.as('reset_mail_status')

/** Users as every read returns them (UserReadRow), the user row aliased `u`. */
function selectUserReads(db: Executor) {
  return db.selectFrom('users as u').selectAll('u').select(resetMailStatus)
}

export async function findUserById(db: Executor, id: string): Promise<UserReadRow | undefined> {
  return selectUserReads(db).where('u.id', '=', id).executeTakeFirst()
}

export async function findUserByEmail(db: Executor, email: string): Promise<UserReadRow | undefined> {
  return selectUserReads(db).where('u.email', '=', email).executeTakeFirst()
}

/**
 * Which users a caller may see or manage beyond itself: `all`, or the members (any membership status)
 * of these tenants and their descendants.
 */
export type UserScope = { all: true } | { all: false; selfId: string | undefined; subtreesOf: string[] }

export interface UserListFilter {
  scope: UserScope
  id?: string | undefined
  email?: string | undefined
  /** Contains-match on the e-mail or the full name, ignoring case (GET /v1/users?q=). */
  search?: string | undefined
  afterId?: string | undefined
  limit?: number | undefined
}

/**
 * The people search of `?q=` (GET /v1/users, GET /v1/tenants/{t}/users): the user row aliased `u` holds
 * `text` in its e-mail, first, last or full name, ignoring case, LIKE's wildcards taken literally.
 */
export function personContains(text: string): RawBuilder<SqlBool> {
  const pattern = containsPattern(text.toLowerCase())
  return sql<SqlBool>`(lower(u.email) like ${pattern} or lower(u.first_name || ' ' || u.last_name) like ${pattern})`
}

export async function listUsers(db: Executor, filter: UserListFilter): Promise<UserReadRow[]> {
  let query = selectUserReads(db)
  const { scope } = filter
  if (!scope.all) {
    const roots = scope.subtreesOf
    const self = scope.selfId
    if (roots.length === 0 && self === undefined) return []
    query = query.where((eb) => {
      const visible = []
      if (self !== undefined) visible.push(eb('u.id', '=', self))
      if (roots.length > 0) {
        visible.push(
          eb.exists(
            eb
              .selectFrom('tenant_users as tu')
              .innerJoin('tenants as t', 't.id', 'tu.tenant_id')
              .select(sql`1`.as('one'))
              .whereRef('tu.user_id', '=', 'u.id')
              .where((inner) =>
                inner.or([
                  inner('t.id', 'in', roots),
                  sql<boolean>`t.parent_ids && ${sql.val(roots)}::uuid[]`,
                ]),
              ),
          ),
        )
      }
      return eb.or(visible)
    })
  }
  if (filter.id !== undefined) query = query.where('u.id', '=', filter.id)
  if (filter.email !== undefined) query = query.where('u.email', '=', filter.email)
  if (filter.search !== undefined) {
    // Erased people (a placeholder e-mail) never match.
    query = query.where('u.status', '!=', 'erased').where(personContains(filter.search))
  }
  return keysetPage(query, 'u.id', filter).execute()
}

/** Whether the user is within the scope (used for single reads and updates). */
/**
 * Whether the user's membership in the tenant is accepted: a user's own default tenant must be one
 * (user-update.service.ts).
 */
export async function isAcceptedMember(db: Executor, tenantId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('tenant_users')
    .select('user_id')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('status', '=', 'accepted')
    .executeTakeFirst()
  return row !== undefined
}

export async function userInScope(db: Executor, userId: string, scope: UserScope): Promise<boolean> {
  if (scope.all) return true
  return (await listUsers(db, { scope, id: userId })).length > 0
}

/**
 * One statement: the write and, when the request carried If-Match, the check that the row is still the
 * version the caller read (etag.ts); `updated` moves on by at least 1 ms per write. 'stale': the row is
 * there but changed since.
 */
export async function updateUser(
  db: Executor,
  id: string,
  changes: Updateable<UsersTable>,
): Promise<UserRow | 'stale' | undefined> {
  const expected = ifMatchUpdated('users')
  let query = db
    .updateTable('users')
    .set({ ...changes, updated: nextUpdated((changes.updated as Date | undefined) ?? new Date()) })
    .where('id', '=', id)
  if (expected) query = query.where('updated', '=', expected)
  const row = await query.returningAll().executeTakeFirst()
  if (row || !expected) return row
  const exists = await db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst()
  return exists ? 'stale' : undefined
}

/**
 * A user's names and — when given — its first password (only while it has none: two racing first
 * passwords, the first wins and the second finds no row). Used by the invitation token's profile step,
 * a `PUT /v1/users/{id}`: its If-Match is checked in the statement, as in updateUser ('stale').
 */
export async function updateNamesAndFirstPassword(
  db: Executor,
  userId: string,
  names: { first_name?: string; last_name?: string },
  passwordHash: string | undefined,
  now: Date,
): Promise<UserRow | 'stale' | undefined> {
  let change = db
    .updateTable('users')
    .set({
      ...names,
      ...(passwordHash ? { password_hash: passwordHash, password_changed_at: now } : {}),
      updated: nextUpdated(now),
      updated_by: userId,
    })
    .where('id', '=', userId)
  if (passwordHash) change = change.where('password_hash', 'is', null)
  const { query, outcome } = ifMatchChecked('users', change)
  const row = await query.returningAll().executeTakeFirst()
  return outcome(row)
}
