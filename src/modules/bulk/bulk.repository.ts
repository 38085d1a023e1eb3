import { CompiledQuery, type Kysely, sql, type Transaction } from 'kysely'
import { withConstraintErrors } from '../../db/constraint-errors.js'
import type { AuditActorType, Database, NewUserRow } from '../../db/schema.js'
import { CHANGES_SEPARATOR, userCreatedChanges } from './user-created-changes.js'

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
 * parameter and `unnest` zips them back into rows (docs/performance.md, "Bulk load"); a column with one
 * value for the whole batch (the creation time, the creator, the nulls of a new user) travels once.
 * An e-mail that is already taken — by an earlier batch, an earlier run or a concurrent writer — is
 * skipped by ON CONFLICT and simply not returned, so it becomes that row's 409 instead of failing the
 * batch. Only what the database adds comes back. The same statement writes the `user.created` audit
 * event of every row it inserts: one insert for the batch's events, and an event exists exactly when its
 * user does, with no transaction and no second round trip.
 */
export function insertUsersSkippingTakenEmails(
  db: Executor,
  rows: NewUserRow[],
  events: UserCreatedEvents,
  longTexts: LongTexts,
): Promise<StoredUser[]> {
  return insertUserBatch(db, rows, events, { skipTaken: true, longTexts })
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
  longTexts: LongTexts,
): Promise<StoredUser[]> {
  return insertUserBatch(db, rows, events, { skipTaken: false, longTexts })
}

/**
 * The `user.created` audit events (docs/webhooks.md) of the rows a batch statement writes: an event id per row,
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

const INSERTED_COLUMNS = COLUMNS.map((c) => c.name).join(', ')

/**
 * How the statement's long texts (the arrays of a batch's values) are sent: as strings, or as their
 * UTF-8 bytes, which the embedded database's dialect sends as they are (db/pglite-dialect.ts) where PGlite
 * would measure each string's UTF-8 length a character at a time in JavaScript — a twentieth of an
 * embedded bulk load's time. `pg` encodes strings natively: bytes would only cost it a copy
 * (docs/performance.md, "Bulk load").
 */
export type LongTexts = 'strings' | 'bytes'

/**
 * The statement is plain text built here, one text per shape (which columns travel as arrays, and
 * whether taken e-mails are skipped): building it costs less than Kysely's compiling of it, and on a
 * server database the same text is the same prepared statement (db/prepared-pool.ts), planned once per
 * connection. Every value is a parameter. The users come from `rows from (…)`, which zips the columns'
 * values, each column split from one text; the events from a `rows from` of their own over the same ids'
 * text, the event ids and the changes (user-created-changes.ts). Two sources rather than one shared
 * `with incoming as (…)`: a query the statement reads twice is materialized, every row written to a
 * store and read back, and joining the events to the users inserted sorted both sides (the sorts alone
 * were 3 % of PostgreSQL's time in a load). A plain insert writes every row or fails whole, so its
 * events need no look at what was inserted; skipping taken e-mails, the events keep the rows whose ids
 * came back. What comes back is one text, `id alias,id alias,…`: a value a row would cost each driver a
 * row object and two strings to read (docs/performance.md, "Bulk load").
 */
async function insertUserBatch(
  db: Executor,
  rows: NewUserRow[],
  events: UserCreatedEvents,
  options: { skipTaken: boolean; longTexts: LongTexts },
): Promise<StoredUser[]> {
  const first = rows[0]
  if (!first) return []
  const parameters: unknown[] = []
  const parameter = (value: unknown, type: string) => `$${parameters.push(value)}::${type}`
  const long = options.longTexts === 'bytes' ? utf8 : (text: string) => text
  const source = (values: readonly unknown[], type: string) =>
    columnSource(values, type, (text) => parameter(long(text), 'text'))
  const sources: string[] = []
  const selected: string[] = []
  let ids = ''
  for (const column of COLUMNS) {
    const firstValue = column.value(first)
    const cast = column.name === 'additional_role_ids' ? '::uuid[]' : ''
    // id always varies, and the statement needs at least one source even for a single row.
    if (column.name !== 'id' && rows.every((row) => same(column.value(row), firstValue))) {
      selected.push(`${parameter(firstValue, column.type)}${cast}`)
      continue
    }
    const n = sources.push(source(rows.map(column.value), column.type))
    if (column.name === 'id') ids = sources[n - 1]!
    selected.push(`s${n}::${column.type}${cast}`)
  }
  const names = sources.map((_, i) => `s${i + 1}`)
  // The events read the users' ids from the same parameter, beside their own ids and changes.
  const eventIds = source(events.ids, 'uuid')
  const changes = `string_to_table(${parameter(long(userCreatedChanges(rows)), 'text')}, ${SEPARATOR_SQL})`
  const text = `with inserted as (
      insert into users (${INSERTED_COLUMNS})
      select ${selected.join(', ')}
      from rows from (${sources.join(', ')}) as incoming(${names.join(', ')})
      ${options.skipTaken ? 'on conflict (email) do nothing' : ''}
      returning id, alias_platform_user_id
    ), events as (
      insert into audit_events
        (id, occurred, actor_type, actor_id, action, tenant_id, target_type, target_id, changes, request_id, ip)
      select event.id::uuid, ${parameter(events.occurred.toISOString(), 'timestamptz')},
             ${parameter(events.actor.type, 'text')}, ${parameter(events.actor.id, 'uuid')}, 'user.created', null,
             'user', event.user_id::uuid, event.changes::jsonb, ${parameter(events.requestId, 'text')},
             ${parameter(events.ip, 'text')}
      from rows from (${ids}, ${eventIds}, ${changes}) as event(user_id, id, changes)
      ${options.skipTaken ? 'where event.user_id::uuid in (select id from inserted)' : ''}
    )
    select string_agg(id::text || ' ' || alias_platform_user_id::text, ',') as stored from inserted`
  // A taken e-mail (users_email_key) is email_taken, naming the e-mail when the statement has one row.
  const email = rows.length === 1 ? first.email : undefined
  const result = await withConstraintErrors(
    () => db.executeQuery<{ stored: string | null }>(CompiledQuery.raw(text, parameters)),
    { email },
  )
  return storedUsers(result.rows[0]?.stored ?? null)
}

function utf8(text: string): Uint8Array {
  return encoder.encode(text)
}

const encoder = new TextEncoder()

/** `id alias,id alias,…` as the rows it names. */
function storedUsers(stored: string | null): StoredUser[] {
  if (stored === null) return []
  return stored.split(',').map((pair) => {
    const space = pair.indexOf(' ')
    return { id: pair.slice(0, space), alias_platform_user_id: pair.slice(space + 1) }
  })
}

/** Between the values of a column's text (CHANGES_SEPARATOR, which JSON never holds either). */
const SEPARATOR = CHANGES_SEPARATOR
const SEPARATOR_SQL = `chr(${SEPARATOR.charCodeAt(0)})`
/** A null value in a column's text. */
const NULL_TEXT = '\u001f'
const NULL_TEXT_SQL = `chr(${NULL_TEXT.charCodeAt(0)})`
// biome-ignore lint/suspicious/noControlCharactersInRegex: the marks are control characters
const MARKS = /[\u001e\u001f]/

/**
 * Where a column's values come from in `rows from`: one text, the values as text with SEPARATOR between
 * them (a null is NULL_TEXT), split by `string_to_table` — which only looks for the separator, where an
 * array literal's reader goes through its quoted elements a character at a time, a tenth of the
 * statement's time in the database (docs/performance.md, "Bulk load"). A column with a value that holds
 * either mark — validated rows never do: they hold no control characters (http/schemas.ts) — goes as an
 * array literal instead.
 */
function columnSource(values: readonly unknown[], type: string, parameter: (text: string) => string): string {
  const texts = new Array<string>(values.length)
  for (let i = 0; i < values.length; i++) {
    const value = values[i]
    texts[i] =
      value === null || value === undefined
        ? NULL_TEXT
        : value instanceof Date
          ? value.toISOString()
          : String(value)
  }
  // Only a string can hold a mark.
  if (values.some((value) => typeof value === 'string' && MARKS.test(value))) {
    return `unnest(${parameter(arrayLiteral(values))}::${type}[])`
  }
  return `string_to_table(${parameter(texts.join(SEPARATOR))}, ${SEPARATOR_SQL}, ${NULL_TEXT_SQL})`
}

/**
 * A column's values as one PostgreSQL array literal, `{"a","b",NULL}`, built with a single join: the
 * drivers' own array encoding grows the text piece by piece, which at hundreds of thousands of values
 * is most of the garbage a load makes. Sent as text and cast, so both drivers pass it through untouched.
 * Most columns are strings none of which holds a quote or a backslash: those are checked and joined
 * whole, without a look at each value.
 */
function arrayLiteral(values: readonly unknown[]): string {
  if (values.every(isString) && !NEEDS_ESCAPE.test(values.join(''))) return `{"${values.join('","')}"}`
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

const isString = (value: unknown): value is string => typeof value === 'string'
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
