import { type RawBuilder, sql } from 'kysely'

/**
 * A piece of a hot statement whose text is reused (statement-texts.ts): its parameters and its SQL come
 * from one template, so they cannot drift apart. `parameters` are what the text's placeholders hold, in
 * their order; `sql()` builds the text only when a shape is compiled for the first time, so a request of
 * a known shape pays for the list of values alone.
 */
export interface Piece {
  readonly parameters: readonly unknown[]
  sql(): RawBuilder<unknown>
}

/** One value as a parameter, cast to its SQL type (`$n::uuid`): every reused text casts its values. */
export function param(value: unknown, type: string): Piece {
  return { parameters: [value], sql: () => sql`${value}::${sql.raw(type)}` }
}

/** One value as a plain parameter, typed by the column it goes to (an INSERT's values). */
export function value(v: unknown): Piece {
  return { parameters: [v], sql: () => sql`${v}` }
}

/** Text without parameters: a keyword, a relation's name, a column expression. */
export function raw(text: string): Piece {
  return { parameters: [], sql: () => sql.raw(text) }
}

export const NOTHING: Piece = raw('')

/** A template of text and pieces: `piece\`select ${a} from ${b}\``. */
export function piece(strings: TemplateStringsArray, ...parts: Piece[]): Piece {
  return {
    parameters: parts.flatMap((part) => part.parameters),
    sql: () => sql(strings, ...parts.map((part) => part.sql())),
  }
}

/** Pieces one after the other, `separator` between them. */
export function joinPieces(parts: readonly Piece[], separator = ', '): Piece {
  return {
    parameters: parts.flatMap((part) => part.parameters),
    sql: () =>
      sql.join(
        parts.map((part) => part.sql()),
        sql.raw(separator),
      ),
  }
}
