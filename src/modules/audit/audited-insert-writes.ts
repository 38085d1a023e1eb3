import type { ServiceContext } from '../../context.js'
import { type ConstraintContext, withConstraintErrors } from '../../db/constraint-errors.js'
import { BATCHING, StatementBatcher } from '../../db/statement-batcher.js'
import { batchedStatementSize } from '../../http/metrics.js'
import {
  type AuditedRow,
  type AuditedTable,
  auditedRowShape,
  executeAuditedInserts,
} from '../../outbox/audited-statement.js'

/**
 * A new row to write with its event (outbox/audited-statement.ts), as its repository describes it
 * (tenantInsert, userInsert, integrationInsert): the table, what the insert answers, the row's unique key
 * and what its constraint errors name.
 */
export interface AuditedInsert extends AuditedRow {
  table: AuditedTable
  returning: 'id' | '*'
  /**
   * Rows with one key never share a statement: two rows that the unique index would refuse together
   * wait for separate statements, so a batch fails only where one of its rows would fail alone.
   */
  uniqueKey: string
  /** What a constraint error of this row names (db/constraint-errors.ts). */
  constraints: ConstraintContext
}

/**
 * Writes a new row and its audit event in one statement and answers its `returning` columns. In a
 * transaction (ctx.db is one) it is one statement of it. Otherwise rows of one table that arrive together
 * share a statement (db/statement-batcher.ts; docs/performance.md, "Writes written together"), each
 * still answered alone: a batch that fails runs each of its rows again on its own, so a refused row — a
 * taken name, an unknown region — is refused alone, as its own domain error.
 */
export function writeAudited<Row>(
  ctx: Pick<ServiceContext, 'db' | 'statementBatchers'>,
  insert: AuditedInsert,
): Promise<Row> {
  const { table, returning } = insert
  if (ctx.db.isTransaction) {
    return withConstraintErrors(async () => {
      const [row] = await executeAuditedInserts<Row>(ctx.db, table, returning, [insert])
      return row as Row
    }, insert.constraints)
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
  return withConstraintErrors(() => batcher.run(insert), insert.constraints)
}
