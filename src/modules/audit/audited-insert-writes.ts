import type { ServiceContext } from '../../context.js'
import { type ConstraintContext, withConstraintErrors } from '../../db/constraint-errors.js'
import { BATCHING, StatementBatcher } from '../../db/statement-batcher.js'
import { batchedStatementSize } from '../../http/metrics.js'
import {
  type AuditedRow,
  type AuditedTable,
  auditedRowShape,
  executeAuditedInserts,
} from '../../outbox/audit-writer.js'

/** What writes an audited insert: the database, and the app's batchers for when it is not a transaction. */
export type AuditedWriter = Pick<ServiceContext, 'db' | 'statementBatchers'>

/** A new row to write with its event, and the value of the row's unique key. */
export interface AuditedInsert extends AuditedRow {
  /**
   * Rows with one key never share a statement: two rows that the unique index would refuse together
   * wait for separate statements, so a batch fails only where one of its rows would fail alone.
   */
  uniqueKey: string
}

/**
 * Writes a new row and its audit event (auditedInserts) and answers its `returning` columns. Outside a
 * transaction, rows of one table that arrive together share a statement (db/statement-batcher.ts;
 * docs/performance.md, "Session of 2026-11-23 (eighth)"), each still answered alone: a batch that fails runs
 * each of its rows again on its own, so a refused row — a taken name, an unknown region — is refused
 * alone, and its constraint error reaches this caller as the domain error `context` completes.
 */
export function insertAudited<Row>(
  ctx: AuditedWriter,
  table: AuditedTable,
  returning: 'id' | '*',
  write: AuditedInsert,
  context: ConstraintContext = {},
): Promise<Row> {
  if (ctx.db.isTransaction) {
    return withConstraintErrors(async () => {
      const [row] = await executeAuditedInserts<Row>(ctx.db, table, returning, [write])
      return row as Row
    }, context)
  }
  const batcher = ctx.statementBatchers.for(`audited insert ${table} ${returning}`, () => {
    return new StatementBatcher<AuditedInsert, Row>(
      (writes) => executeAuditedInserts<Row>(ctx.db, table, returning, writes),
      {
        shapeOf: auditedRowShape,
        conflictKey: (w) => w.uniqueKey,
        ...BATCHING,
        onBatch: (size) => batchedStatementSize.observe({ write: table }, size),
      },
    )
  })
  return withConstraintErrors(() => batcher.run(write), context)
}
