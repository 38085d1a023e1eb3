import { type Kysely, sql, type Transaction } from 'kysely'
import type { Database, NewUserRow, UserRow } from '../../db/schema.js'

type Executor = Kysely<Database> | Transaction<Database>

/**
 * Many user rows in one statement: each column travels as one array parameter and `unnest` zips them
 * back into rows (STACK.md: the measured ceiling, ~50 k rows/s). An e-mail that is already taken —
 * by an earlier batch, an earlier run or a concurrent writer — is skipped by ON CONFLICT and simply not
 * returned, so it becomes that row's 409 instead of failing the batch.
 *
 * `additional_role_ids` is a uuid[] per row; unnest would flatten a two-dimensional array, so each
 * row's list travels as its array literal text and is cast back per row.
 */
export async function insertUsersSkippingTakenEmails(db: Executor, rows: NewUserRow[]): Promise<UserRow[]> {
  if (rows.length === 0) return []
  const column = <T>(pick: (row: NewUserRow) => T) => rows.map(pick)
  const result = await sql<UserRow>`
    insert into users (id, email, role_id, additional_role_ids, first_name, last_name, external_id,
      personal_telephone, status, default_tenant, password_hash, password_changed_at,
      reset_password_expiry_date, created, created_by, updated, updated_by)
    select id, email, role_id, additional_role_ids::uuid[], first_name, last_name, external_id,
      personal_telephone, status, default_tenant, password_hash, password_changed_at,
      reset_password_expiry_date, created, created_by, updated, updated_by
    from unnest(
      ${column((r) => r.id)}::uuid[],
      ${column((r) => r.email)}::text[],
      ${column((r) => r.role_id)}::uuid[],
      ${column((r) => arrayLiteral(r.additional_role_ids ?? []))}::text[],
      ${column((r) => r.first_name ?? '')}::text[],
      ${column((r) => r.last_name ?? '')}::text[],
      ${column((r) => r.external_id ?? '')}::text[],
      ${column((r) => r.personal_telephone ?? null)}::text[],
      ${column((r) => r.status)}::text[],
      ${column((r) => r.default_tenant ?? null)}::uuid[],
      ${column((r) => r.password_hash ?? null)}::text[],
      ${column((r) => r.password_changed_at ?? null)}::timestamptz[],
      ${column((r) => r.reset_password_expiry_date ?? null)}::timestamptz[],
      ${column((r) => r.created)}::timestamptz[],
      ${column((r) => r.created_by ?? null)}::uuid[],
      ${column((r) => r.updated)}::timestamptz[],
      ${column((r) => r.updated_by ?? null)}::uuid[]
    ) as incoming(id, email, role_id, additional_role_ids, first_name, last_name, external_id,
      personal_telephone, status, default_tenant, password_hash, password_changed_at,
      reset_password_expiry_date, created, created_by, updated, updated_by)
    on conflict (email) do nothing
    returning *
  `.execute(db)
  return result.rows
}

/** The e-mails among `emails` that already belong to a user (dry runs write nothing to find out). */
export async function findTakenEmails(db: Executor, emails: string[]): Promise<Set<string>> {
  if (emails.length === 0) return new Set()
  const result = await sql<{ email: string }>`
    select email from users where email = any(${emails}::text[])
  `.execute(db)
  return new Set(result.rows.map((row) => row.email))
}

/** `{a,b}`: uuids need no quoting. */
function arrayLiteral(ids: readonly string[]): string {
  return `{${ids.join(',')}}`
}
