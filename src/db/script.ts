import { type Kysely, sql } from 'kysely'

/**
 * Runs a DDL script statement by statement. The embedded database speaks only the extended query
 * protocol (one statement per call), so a migration's script is split on the semicolons that end a
 * line. Scripts therefore keep each statement's closing semicolon at a line end and hold no function
 * bodies.
 */
export async function executeScript(db: Kysely<unknown>, script: string): Promise<void> {
  const statements = script
    .split(/;\s*$/m)
    .map((statement) => statement.replace(/^\s*--.*$/gm, '').trim())
    .filter((statement) => statement.length > 0)
  for (const statement of statements) {
    await sql.raw(statement).execute(db)
  }
}
