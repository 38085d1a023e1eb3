import { joinPieces, NOTHING, type Piece, piece, raw, value } from './statement-pieces.js'

/**
 * The rows of a write as their repositories state them, for the write unit (outbox/write-unit.ts) to
 * place in its one statement: each row one INSERT (a CTE), its values from the row's one list of columns
 * (docs/performance.md, "The write unit").
 */

/**
 * The name of a relation of one copy of a write (db/statement-batcher.ts copyName): what a row's values
 * and the write's answer use to read another relation of the same copy.
 */
export type RelationOf = (name: string) => Piece

/** A new row of a write: one `insert … returning` of its statement. */
export interface NewRow {
  /** Its relation (the CTE): the answer, its event, its mail and later rows read it by this name. */
  as: string
  table: string
  /** The columns, in the order `values` gives them. */
  columns: readonly string[]
  values(relation: RelationOf): Piece
  /** A relation the values are selected from (`insert … select … from it`): no row there, none written. */
  from?: string
  /** What the insert answers (`returning …`). */
  returning: string
  /**
   * What the row's text depends on beyond its table and relation — which columns it names, the optional
   * parts of its values — never the values: rows of one shape share a statement text (statement-texts.ts).
   */
  shape: string
}

/** A read of the statement (a CTE `as (select …)`) that its rows or its answer use. */
export interface LookUp {
  as: string
  select: Piece
}

/**
 * The INSERT of `row` as its relation's body. With a `guard` (a condition, such as a limit's count) the
 * row is written only when it holds: nothing past a limit is written.
 */
export function rowInsert(row: NewRow, relation: RelationOf, guard: Piece = NOTHING): Piece {
  const columns = raw(row.columns.map((column) => `"${column}"`).join(', '))
  const values = row.values(relation)
  const from = row.from === undefined ? NOTHING : piece` from ${relation(row.from)}`
  const body =
    row.from === undefined && guard === NOTHING
      ? piece`values (${values})`
      : piece`select ${values}${from}${guard === NOTHING ? NOTHING : piece` where ${guard}`}`
  return piece`insert into "${raw(row.table)}" (${columns}) ${body} returning ${raw(row.returning)}`
}

/**
 * A row given as a record (column → value), for the tables whose new rows are plain values (tenants,
 * users, integrations). A column whose value is undefined takes its default, so the columns that have a
 * value are the row's shape.
 */
export function recordRow(
  table: string,
  record: Readonly<Record<string, unknown>>,
  options: { as?: string; returning: string },
): NewRow {
  const columns = Object.keys(record).filter((column) => record[column] !== undefined)
  return {
    as: options.as ?? 'change',
    table,
    columns,
    values: () => joinPieces(columns.map((column) => value(record[column]))),
    returning: options.returning,
    shape: columns.join(','),
  }
}
