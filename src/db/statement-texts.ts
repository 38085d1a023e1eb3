import { CompiledQuery } from 'kysely'

/**
 * Statement texts reused by shape, for the hot writes whose statement is big: building and compiling it
 * with Kysely on every request is a visible share of its server CPU (docs/performance.md), although its
 * text depends only on its shape — which optional parts it has, never on the values. So a shape's text is
 * compiled once; later requests of that shape send it with their parameters, listed by the caller in the
 * order the text places them.
 *
 * A caller's text and parameters come from one template (db/statement-pieces.ts), so they cannot drift;
 * still, the first compile of a shape compares the caller's list with Kysely's own, and a shape whose
 * lists differ is never reused — it is compiled every time, still correct, and
 * test/outbox/audit-statement.test.ts fails on it.
 */
export class StatementTexts {
  readonly #texts = new Map<string, string>()
  readonly #reused = new Set<string>()

  /**
   * The statement of shape `key` with `parameters`: its reused text, or — the first time, or for a shape
   * whose parameter list did not match — what `build()` compiles.
   */
  compile<Row>(
    key: string,
    parameters: readonly unknown[],
    build: () => CompiledQuery<Row>,
  ): CompiledQuery<Row> {
    const text = this.#texts.get(key)
    if (text !== undefined) return CompiledQuery.raw(text, parameters as unknown[]) as CompiledQuery<Row>
    const compiled = build()
    if (sameParameters(compiled.parameters, parameters)) {
      this.#texts.set(key, compiled.sql)
      this.#reused.add(compiled.sql)
    }
    return compiled
  }

  /**
   * Whether `text` is a reused shape's: their number is bounded by their shapes, so the prepared-statement
   * pool names them whatever their length (db/prepared-pool.ts).
   */
  holds(text: string): boolean {
    return this.#reused.has(text)
  }

  /**
   * Whether some shape whose key starts with `prefix` (and whose rest passes `rest`) is reused, for the
   * tests that hold paths to it.
   */
  reuses(prefix: string, rest: (suffix: string) => boolean = () => true): boolean {
    for (const key of this.#texts.keys())
      if (key.startsWith(prefix) && rest(key.slice(prefix.length))) return true
    return false
  }
}

/** Equal parameter lists; dates by their instant (a caller's list may hold a copy of the builder's). */
function sameParameters(a: readonly unknown[], b: readonly unknown[]): boolean {
  return (
    a.length === b.length &&
    a.every((value, i) => {
      const other = b[i]
      if (value instanceof Date && other instanceof Date) return value.getTime() === other.getTime()
      return value === other
    })
  )
}

/** The process's reused texts: a few dozen at most (tables × forms × optional parts). */
export const statementTexts = new StatementTexts()
