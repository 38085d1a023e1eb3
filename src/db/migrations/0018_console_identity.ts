import type { Kysely } from 'kysely'
import { executeScript } from '../script.js'

/**
 * The signed-in person's identity, kept with their console session (docs/console.md "Sessions"): the
 * answer of `POST /v1/login` and when it was read. A page draws it while it is fresh (a minute) and the
 * console forgets it whenever it can have changed, so the API is asked once per session and again only
 * then — not on every page. It only chooses which controls a page draws; the API decides every call.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    alter table console_sessions add column login jsonb;
    alter table console_sessions add column login_read timestamptz;
  `,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    alter table console_sessions drop column login_read;
    alter table console_sessions drop column login;
  `,
  )
}
