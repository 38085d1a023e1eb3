/**
 * The one statement of the write unit (write-unit.ts): a data-modifying WITH that writes each copy's rows,
 * their audit events, its mail and its count, and answers each copy — one round trip, atomic without a
 * transaction (docs/performance.md, "The write unit"). Every text is a Piece (db/statement-pieces.ts), so
 * a shape's text is compiled once and reused (db/statement-texts.ts).
 */
import type { CompiledQuery, Kysely } from 'kysely'
import type { LookUp, NewRow, RelationOf } from '../db/row-inserts.js'
import { rowInsert } from '../db/row-inserts.js'
import type { Database } from '../db/schema.js'
import { copyName, copySuffix } from '../db/statement-batcher.js'
import { joinPieces, NOTHING, type Piece, param, piece, raw } from '../db/statement-pieces.js'
import { statementTexts } from '../db/statement-texts.js'
import { type CounterWindow, type CountInStatement, counterWindow } from '../http/rate-limit.js'
import type { AuditEvent } from './audit-event.js'
import { auditEventCtes } from './audited-statement.js'
import type { NewOutboxRow } from './outbox.repository.js'
import { insertOutboxRowFrom } from './outbox.repository.js'
import { type AuditForm, executeAudited } from './webhook-fan-out.js'

/** A row's audit event, written exactly when the row is. */
export interface RowEvent {
  event: AuditEvent
  /** A column of the row that is the event's target id, when only the statement knows it. */
  targetIdColumn?: string
  /** The ancestors of the event's tenant when that tenant is the row itself (a new tenant). */
  ancestorIds?: readonly string[]
}

/** A new row and, when it is a change the audit trail records, its event. */
export interface UnitRow extends NewRow {
  audit?: RowEvent
}

/** Mail queued with the write: an outbox row written exactly when the row it follows is. */
export interface UnitMail {
  row: NewOutboxRow
  /** The relation whose row the mail follows. */
  follows: string
  /** Payload fields the statement fills from that row: field → column. */
  payload?: Readonly<Record<string, string>>
}

/** What the statement answers for a write: `select` over its relations `from`, joined. */
export interface UnitAnswer {
  from: readonly string[]
  select(relation: RelationOf): Piece
}

/** One write as its statement places it: what the unit made of a UnitInsert (write-unit.ts). */
export interface StatementWrite {
  /** Writes of one kind and shape share a statement; a kind's look-ups and answer are one text a shape. */
  kind: string
  lookUps?: readonly LookUp[]
  rows: readonly UnitRow[]
  mail?: UnitMail
  count?: CountInStatement
  answer: UnitAnswer
}

/** What the statement answered for one write: its answer's row (none: nothing to answer), its count. */
export interface Answered {
  row: Readonly<Record<string, unknown>> | undefined
  window?: CounterWindow
}

const COUNT = 'limit_count'

/**
 * Which text a write needs: writes of one shape can share a statement (db/statement-batcher.ts). The text
 * depends on the parts a write has and on its rows' shapes, never on the values.
 */
export function statementShape(write: StatementWrite): string {
  const { lookUps = [], rows, mail, count, answer } = write
  const rowShapes = rows.map((row) =>
    [
      row.as,
      row.table,
      row.from ?? '',
      row.returning,
      row.shape,
      row.audit ? `e${row.audit.targetIdColumn ?? ''}${row.audit.ancestorIds ? 'a' : ''}` : '',
    ].join('\u0001'),
  )
  const mailShape = mail ? `${mail.follows}:${Object.entries(mail.payload ?? {}).join(',')}` : ''
  return [
    write.kind,
    count ? 'c' : '',
    mailShape,
    answer.from.join(','),
    ...lookUps.map((lookUp) => lookUp.as),
    ...rowShapes,
  ].join('\u0000')
}

/** The CTEs of copy `k` of a write: its count, look-ups, rows with their events, and its mail. */
function copyCtes(write: StatementWrite, k: number, form: AuditForm): Piece {
  const relation: RelationOf = (name) => raw(copyName(name, k))
  const parts: Piece[] = []
  const { count, mail } = write
  if (count) parts.push(piece`${relation(COUNT)} as (${count})`)
  for (const lookUp of write.lookUps ?? []) parts.push(piece`${relation(lookUp.as)} as (${lookUp.select})`)
  const guard = count
    ? piece`(select count from ${relation(COUNT)}) <= ${param(count.limit, 'int')}`
    : NOTHING
  let events = 0
  for (const row of write.rows) {
    parts.push(piece`${relation(row.as)} as (${rowInsert(row, relation, guard)})`)
    if (!row.audit) continue
    const { event, ...source } = row.audit
    // The first event of a copy keeps the plain name (audit_event), later ones are numbered.
    const suffix = `${events === 0 ? '' : `_e${events}`}${copySuffix(k)}`
    parts.push(auditEventCtes(event, { ...source, relation: copyName(row.as, k) }, form, suffix))
    events += 1
  }
  if (mail) {
    const source = copyName(mail.follows, k)
    const fields = Object.entries(mail.payload ?? {}).map(
      ([field, column]) => `'${field}', ${source}.${column}`,
    )
    const addition = raw(`jsonb_build_object(${fields.join(', ')})`)
    parts.push(piece`${relation('mail')} as (${insertOutboxRowFrom(mail.row, source, addition)})`)
  }
  return joinPieces(parts)
}

/** The answer of copy `k`: which copy, its answer's columns and, when it counted, the count. */
function copyAnswer(write: StatementWrite, k: number): Piece {
  const relation: RelationOf = (name) => raw(copyName(name, k))
  const from = joinPieces(write.answer.from.map(relation), ' cross join ')
  const select = piece`${raw(String(k))}::int as copy, ${write.answer.select(relation)}`
  if (!write.count) return piece`select ${select} from ${from}`
  // The count comes back even when nothing was written.
  const count = relation(COUNT)
  const joined = write.answer.from.length === 1 ? from : piece`(${from})`
  return piece`select ${select}, ${count}.count as limit_count, ${count}.reset_at as limit_reset_at
    from ${count} left join ${joined} on true`
}

/** The prefix of the unit's shapes among the reused statement texts. */
const UNIT_SHAPE = 'write unit\u0000'

/** The statement of `writes` (all of one shape) in `form`, its text compiled once per shape and size. */
function unitStatement(db: Kysely<Database>, writes: readonly StatementWrite[], form: AuditForm) {
  const first = writes[0]
  if (!first) throw new Error('a write unit statement needs a write')
  const copies = writes.map((write, k) => copyCtes(write, k, form))
  const answers = writes.map((write, k) => copyAnswer(write, k))
  const whole = piece`with ${joinPieces(copies)} ${joinPieces(answers, ' union all ')}`
  const key = `${UNIT_SHAPE}${first.kind}\u0000${writes.length}\u0000${form}\u0000${statementShape(first)}`
  return statementTexts.compile<AnsweredRow>(key, whole.parameters, () =>
    whole.sql().compile(db),
  ) as CompiledQuery<AnsweredRow>
}

type AnsweredRow = Record<string, unknown> & { copy: number; limit_count?: number; limit_reset_at?: Date }

/**
 * Writes `writes` (all of one shape) in one statement, run with executeAudited (webhook-fan-out.ts), and
 * answers each in their order. The statement is one transaction: every write is written, or none.
 */
export async function executeWrites(
  db: Kysely<Database>,
  writes: readonly StatementWrite[],
): Promise<Answered[]> {
  const { rows } = await executeAudited(db, (form) => unitStatement(db, writes, form))
  const byCopy = new Map(rows.map((row) => [row.copy, row]))
  return writes.map((_, k) => {
    const answered = byCopy.get(k)
    if (!answered) return { row: undefined }
    const { copy: _copy, limit_count, limit_reset_at, ...row } = answered
    if (limit_count === undefined || limit_reset_at === undefined) return { row }
    return { row, window: counterWindow({ count: limit_count, reset_at: limit_reset_at }) }
  })
}

/**
 * Whether a shape of `kind` has its text reused (for the tests that hold the hot paths to it): of one
 * write, or of several in one statement.
 */
export function isReusedWriteShape(kind: string, copies: 'one' | 'several' = 'one'): boolean {
  return statementTexts.reuses(`${UNIT_SHAPE}${kind}\u0000`, (rest) => {
    const count = Number(rest.slice(0, rest.indexOf('\u0000')))
    return copies === 'one' ? count === 1 : count > 1
  })
}
