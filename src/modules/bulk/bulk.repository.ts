import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely'
import { withConstraintErrors } from '../../db/constraint-errors.js'
import type { AuditActorType, Database, NewUserRow } from '../../db/schema.js'

type Executor = Kysely<Database> | Transaction<Database>

/** What the database adds to a stored row: the alias it issued. The rest the caller already has. */
export interface StoredUser {
  id: string
  alias_platform_user_id: string
}

interface Column {
  name: keyof NewUserRow & string
  type: string
  value: (row: NewUserRow) => unknown
}

// additional_role_ids is a uuid[] per row; unnest would flatten a two-dimensional array, so each row's
// list travels as its array literal text and is cast back per row.
const COLUMNS: Column[] = [
  { name: 'id', type: 'uuid', value: (r) => r.id },
  { name: 'email', type: 'text', value: (r) => r.email },
  { name: 'role_id', type: 'uuid', value: (r) => r.role_id },
  { name: 'additional_role_ids', type: 'text', value: (r) => `{${(r.additional_role_ids ?? []).join(',')}}` },
  { name: 'first_name', type: 'text', value: (r) => r.first_name ?? '' },
  { name: 'last_name', type: 'text', value: (r) => r.last_name ?? '' },
  { name: 'external_id', type: 'text', value: (r) => r.external_id ?? '' },
  { name: 'personal_telephone', type: 'text', value: (r) => r.personal_telephone ?? null },
  { name: 'status', type: 'text', value: (r) => r.status },
  { name: 'default_tenant', type: 'uuid', value: (r) => r.default_tenant ?? null },
  { name: 'password_hash', type: 'text', value: (r) => r.password_hash ?? null },
  { name: 'password_changed_at', type: 'timestamptz', value: (r) => r.password_changed_at ?? null },
  {
    name: 'reset_password_expiry_date',
    type: 'timestamptz',
    value: (r) => r.reset_password_expiry_date ?? null,
  },
  { name: 'created', type: 'timestamptz', value: (r) => r.created },
  { name: 'created_by', type: 'uuid', value: (r) => r.created_by ?? null },
  { name: 'updated', type: 'timestamptz', value: (r) => r.updated },
  { name: 'updated_by', type: 'uuid', value: (r) => r.updated_by ?? null },
]

const same = (a: unknown, b: unknown) =>
  a === b || (a instanceof Date && b instanceof Date && a.getTime() === b.getTime())

/**
 * Many user rows in one statement: each column that differs between rows travels as one array
 * parameter and `unnest` zips them back into rows (STACK.md: the measured ceiling); a column with one
 * value for the whole batch (the creation time, the creator, the nulls of a new user) travels once.
 * An e-mail that is already taken — by an earlier batch, an earlier run or a concurrent writer — is
 * skipped by ON CONFLICT and simply not returned, so it becomes that row's 409 instead of failing the
 * batch. Only what the database adds comes back. The same statement writes the `user.created` audit
 * event of every row it inserts (built from the row as stored): one insert for the batch's events, and
 * an event exists exactly when its user does, with no transaction and no second round trip.
 */
export function insertUsersSkippingTakenEmails(
  db: Executor,
  rows: NewUserRow[],
  events: UserCreatedEvents,
): Promise<StoredUser[]> {
  return insertUserBatch(db, rows, events, true)
}

/**
 * The same statement without ON CONFLICT: a taken e-mail fails the whole statement (unique violation
 * on users_email_key), and nothing is written. PostgreSQL inserts each row of ON CONFLICT … DO NOTHING
 * speculatively (insert, check the index, confirm), which costs it about a tenth more per row than a
 * plain insert: a load whose e-mails are new — the usual case — is cheaper this way, and falls back to
 * the other form once it meets a taken e-mail.
 */
export function insertUsers(
  db: Executor,
  rows: NewUserRow[],
  events: UserCreatedEvents,
): Promise<StoredUser[]> {
  return insertUserBatch(db, rows, events, false)
}

/**
 * The `user.created` audit events (API.md §13) of the rows a batch statement writes: an event id per row,
 * in row order (UUIDv7, so the trail lists a batch in input order), and what every event of the batch
 * shares — the time, the actor and the request — as the audit writer (`recordAudit`) would store them.
 */
export interface UserCreatedEvents {
  ids: string[]
  occurred: Date
  actor: { type: AuditActorType; id: string | null }
  requestId: string | null
  ip: string | null
}

/**
 * The changes of a `user.created` event, built from the row as stored: the SQL form of user-audit.ts
 * `userCreatedRecord` (every profile field, status and roles as [null, value]; a null value is kept, as
 * there). Bulk rows never carry a password, so there is no masked password field. test/audit-bulk.test.ts
 * checks that a bulk row's event equals a single create's.
 */
const USER_CREATED_CHANGES = sql`jsonb_build_object(
  'email', jsonb_build_array(null, inserted.email),
  'firstName', jsonb_build_array(null, inserted.first_name),
  'lastName', jsonb_build_array(null, inserted.last_name),
  'externalId', jsonb_build_array(null, inserted.external_id),
  'personalTelephone', jsonb_build_array(null, inserted.personal_telephone),
  'defaultTenant', jsonb_build_array(null, inserted.default_tenant),
  'status', jsonb_build_array(null, inserted.status),
  'roleId', jsonb_build_array(null, inserted.role_id),
  'additionalRoleIds', jsonb_build_array(null, inserted.additional_role_ids)
)`

async function insertUserBatch(
  db: Executor,
  rows: NewUserRow[],
  events: UserCreatedEvents,
  skipTaken: boolean,
): Promise<StoredUser[]> {
  const first = rows[0]
  if (!first) return []
  const arrays: RawBuilder<unknown>[] = []
  const arrayNames: string[] = []
  const selected: RawBuilder<unknown>[] = []
  for (const column of COLUMNS) {
    const firstValue = column.value(first)
    // id always varies, and unnest needs at least one array even for a single row.
    const uniform = column.name !== 'id' && rows.every((row) => same(column.value(row), firstValue))
    const cast = column.name === 'additional_role_ids' ? '::uuid[]' : ''
    if (uniform) {
      selected.push(sql`${firstValue}::${sql.raw(column.type)}${sql.raw(cast)}`)
    } else {
      arrays.push(sql`${arrayLiteral(rows.map(column.value))}::text::${sql.raw(column.type)}[]`)
      arrayNames.push(column.name)
      selected.push(sql`incoming.${sql.ref(column.name)}${sql.raw(cast)}`)
    }
  }
  // The event ids travel beside the rows; only the rows actually inserted get their event.
  arrays.push(sql`${arrayLiteral(events.ids)}::text::uuid[]`)
  arrayNames.push('event_id')
  // A taken e-mail (users_email_key) is email_taken, naming the e-mail when the statement has one row.
  const email = rows.length === 1 ? first.email : undefined
  const statement = sql<StoredUser>`
    with incoming as (
      select * from unnest(${sql.join(arrays)}) as incoming(${sql.join(arrayNames.map((n) => sql.ref(n)))})
    ), inserted as (
      insert into users (${sql.join(COLUMNS.map((c) => sql.ref(c.name)))})
      select ${sql.join(selected)}
      from incoming
      ${skipTaken ? sql`on conflict (email) do nothing` : sql``}
      returning id, alias_platform_user_id, email, first_name, last_name, external_id, personal_telephone,
                default_tenant, status, role_id, additional_role_ids
    ), events as (
      insert into audit_events
        (id, occurred, actor_type, actor_id, action, tenant_id, target_type, target_id, changes, request_id, ip)
      select incoming.event_id, ${events.occurred.toISOString()}::timestamptz, ${events.actor.type}::text,
             ${events.actor.id}::uuid, 'user.created', null, 'user', inserted.id, ${USER_CREATED_CHANGES},
             ${events.requestId}::text, ${events.ip}::text
      from inserted join incoming on incoming.id = inserted.id
    )
    select id, alias_platform_user_id from inserted
  `
  const result = await withConstraintErrors(() => statement.execute(db), { email })
  return result.rows
}

/**
 * A column's values as one PostgreSQL array literal, `{"a","b",NULL}`, built with a single join: the
 * drivers' own array encoding grows the text piece by piece, which at hundreds of thousands of values
 * is most of the garbage a load makes. Sent as text and cast, so both drivers pass it through untouched.
 */
function arrayLiteral(values: unknown[]): string {
  const elements = new Array<string>(values.length)
  for (let i = 0; i < values.length; i++) {
    const value = values[i]
    if (value === null || value === undefined) {
      elements[i] = 'NULL'
      continue
    }
    const text = value instanceof Date ? value.toISOString() : String(value)
    elements[i] = `"${NEEDS_ESCAPE.test(text) ? text.replace(ESCAPED, '\\$&') : text}"`
  }
  return `{${elements.join(',')}}`
}

const NEEDS_ESCAPE = /["\\]/
const ESCAPED = /["\\]/g

/** The e-mails among `emails` that already belong to a user (dry runs write nothing to find out). */
export async function findTakenEmails(db: Executor, emails: string[]): Promise<Set<string>> {
  if (emails.length === 0) return new Set()
  const result = await sql<{ email: string }>`
    select email from users where email = any(${emails}::text[])
  `.execute(db)
  return new Set(result.rows.map((row) => row.email))
}
