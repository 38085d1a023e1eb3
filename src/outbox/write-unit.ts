/**
 * The write unit: the one way a service writes new records (docs/performance.md, "The write unit"). A
 * service states what it writes — the rows (built by its repository from their one list of columns), each
 * row's audit event, the mail it queues, the limit it counts — and the unit owns the machinery of speed:
 * the one statement and its reused text (unit-statement.ts), batching with the writes that arrive
 * together (db/statement-batcher.ts), counting inside the statement, the outbox hand-over
 * (outbox-signal.ts) and the mapping of constraint errors to domain errors (db/constraint-errors.ts).
 * Changes of several statements (updates) run in `transaction`, which queues their mail the same way.
 */
import type { Kysely, Transaction } from 'kysely'
import type { ServiceContext } from '../context.js'
import { type ConstraintContext, withConstraintErrors } from '../db/constraint-errors.js'
import type { LookUp } from '../db/row-inserts.js'
import { recordRow } from '../db/row-inserts.js'
import type { Database } from '../db/schema.js'
import { BATCHING, StatementBatcher } from '../db/statement-batcher.js'
import { piece } from '../db/statement-pieces.js'
import { batchedStatementSize } from '../http/metrics.js'
import type { CountedLimit } from '../http/rate-limit.js'
import type { AuditEvent } from './audit-event.js'
import { insertOutboxRows, type NewOutboxRow } from './outbox.repository.js'
import {
  type Answered,
  executeWrites,
  type StatementWrite,
  statementShape,
  type UnitAnswer,
  type UnitMail,
  type UnitRow,
} from './unit-statement.js'

export type { LookUp, NewRow, RelationOf } from '../db/row-inserts.js'
export { isReusedWriteShape, type RowEvent, type UnitAnswer, type UnitRow } from './unit-statement.js'

/** What the unit needs of the application: its database, its batchers and its outbox signal. */
export type WriteContext = Pick<ServiceContext, 'db' | 'statementBatchers' | 'outboxSignal'>

/** New rows written together, as a service states them; `read` makes the stored record of the answer. */
export interface UnitInsert<Stored> {
  /**
   * What is written: writes of one kind that arrive together share a statement (and a batcher), and the
   * metrics name it (tenantry_batched_statement_size{write}).
   */
  kind: string
  lookUps?: readonly LookUp[]
  /** In the order the statement writes them; a row with `audit` writes its event exactly when it is written. */
  rows: readonly UnitRow[]
  /** Mail queued with the rows: written with them, handed to this process's worker once committed. */
  mail?: UnitMail
  /** A limit the write counts: nothing is written past it, and the write is refused (429). */
  countLimit?: CountedLimit
  answer: UnitAnswer
  /**
   * Writes with one key never share a statement: two that a unique index or one counter row would refuse
   * together wait for separate statements, so a batch fails only where one of its writes would fail alone.
   */
  uniqueKey: string
  /** What a constraint error of this write names (db/constraint-errors.ts). */
  constraints?: ConstraintContext
  /** The stored record from the answer's row (none: the statement had nothing to answer). */
  read(row: Readonly<Record<string, unknown>> | undefined): Stored
}

/** A change of several statements in one transaction, with the mail it queues. */
export interface UnitTransaction {
  db: Transaction<Database>
  /**
   * Queues mail with the change: `row` is written in this transaction, leased to this process's worker,
   * which gets it once the transaction committed.
   */
  mail(row: NewOutboxRow): Promise<void>
  /**
   * Queues a bulk load's batch of mail in one insert, none leased: the worker's scan of due rows finds
   * them, woken once the transaction committed (a batch would swamp its hand-over).
   */
  mailAll(rows: readonly NewOutboxRow[]): Promise<void>
}

export interface WriteUnit {
  /**
   * Writes the rows, their events, mail and count in one statement and answers the stored record; a
   * constraint violation is its domain error, a count past the limit a 429 with nothing written. Outside
   * a transaction, writes of one kind that arrive together share the statement, each still answered — and
   * refused — alone; in one (ctx.db is a transaction), it is one statement of it.
   */
  insert<Stored>(write: UnitInsert<Stored>): Promise<Stored>
  /** Runs `work` in one transaction; the mail it queued goes to the worker once it committed. */
  transaction<T>(work: (tx: UnitTransaction) => Promise<T>): Promise<T>
}

export function writeUnit(ctx: WriteContext): WriteUnit {
  return {
    insert: (write) => insert(ctx, write),
    transaction: (work) => transaction(ctx, work),
  }
}

async function insert<Stored>(ctx: WriteContext, write: UnitInsert<Stored>): Promise<Stored> {
  const { countLimit } = write
  const count = countLimit?.inStatement()
  if (countLimit && !count) await countLimit.take()
  const inTransaction = ctx.db.isTransaction
  // Inside a caller's transaction the commit is not ours to see: the mail is left to the worker's scan.
  const mail = write.mail && {
    ...write.mail,
    row: { ...write.mail.row, lease: inTransaction ? undefined : ctx.outboxSignal.lease(write.mail.row.now) },
  }
  const statementWrite: BatchedWrite = { ...write, mail, count, uniqueKey: write.uniqueKey }
  const answered = await withConstraintErrors(async () => {
    if (!inTransaction) return batcherOf(ctx, write.kind).run(statementWrite)
    const [one] = await executeWrites(ctx.db, [statementWrite])
    return one as Answered
  }, write.constraints)
  if (answered.window) countLimit?.refuse(answered.window)
  const stored = write.read(answered.row)
  if (mail && stored !== undefined && !inTransaction) ctx.outboxSignal.handOver([mail.row])
  return stored
}

type BatchedWrite = StatementWrite & { uniqueKey: string }

/** The app's batcher of one kind of write (BATCHING: at most 16 a statement, two statements at once). */
function batcherOf(ctx: WriteContext, kind: string): StatementBatcher<BatchedWrite, Answered> {
  return ctx.statementBatchers.for(`write unit ${kind}`, () => {
    return new StatementBatcher<BatchedWrite, Answered>((writes) => executeWrites(ctx.db, writes), {
      shapeOf: statementShape,
      conflictKey: (write) => write.uniqueKey,
      ...BATCHING,
      onBatch: (size) => batchedStatementSize.observe({ write: kind }, size),
    })
  })
}

async function transaction<T>(ctx: WriteContext, work: (tx: UnitTransaction) => Promise<T>): Promise<T> {
  const queued: NewOutboxRow[] = []
  let unleased = false
  const result = await (ctx.db as Kysely<Database>).transaction().execute((db) =>
    work({
      db,
      mail: async (row) => {
        const leased = { ...row, lease: ctx.outboxSignal.lease(row.now) }
        await insertOutboxRows(db, [leased])
        queued.push(leased)
      },
      mailAll: async (rows) => {
        await insertOutboxRows(db, rows)
        unleased ||= rows.length > 0
      },
    }),
  )
  if (queued.length > 0 || unleased) ctx.outboxSignal.handOver(queued)
  return result
}

/**
 * A new record of a plain table and its audit event, answering the insert's `returning` columns: a
 * repository's one call for its table (tenants, users, integrations).
 */
export function recordInsert<Stored>(
  table: 'tenants' | 'users' | 'integrations',
  record: Readonly<Record<string, unknown>>,
  options: {
    event: AuditEvent
    returning: 'id' | '*'
    uniqueKey: string
    constraints: ConstraintContext
    /** The ancestors of the event's tenant, when that tenant is the record itself (a new tenant). */
    ancestorIds?: readonly string[]
  },
): UnitInsert<Stored> {
  const { event, ancestorIds, returning, uniqueKey, constraints } = options
  const row = recordRow(table, record, { returning })
  return {
    kind: table,
    rows: [{ ...row, audit: ancestorIds ? { event, ancestorIds } : { event } }],
    answer: { from: [row.as], select: (relation) => piece`${relation(row.as)}.*` },
    uniqueKey,
    constraints,
    read: (answered) => {
      if (!answered) throw new Error(`INSERT … RETURNING gave no ${table} row`)
      return answered as Stored
    },
  }
}
