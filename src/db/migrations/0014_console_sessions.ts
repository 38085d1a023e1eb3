import type { Kysely } from 'kysely'
import { executeScript } from '../script.js'

/**
 * The console's sessions (docs/console.md). The browser holds only a random session id in an HttpOnly cookie;
 * the row is found by the id's SHA-256 and holds the person's platform token encrypted (crypto/secrets.ts),
 * so neither a page nor a copy of this table gives a usable token. Sign-out deletes the row; the token's
 * expiry ends it (`expires`); a disabled person or a password change make the API refuse the token, and
 * the console then deletes the row. The index on `expires` lets the sweep drop dead sessions.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    create table console_sessions (
      id_hash text primary key,
      user_id uuid not null,
      token jsonb not null,
      created timestamptz not null,
      expires timestamptz not null
    );
    create index console_sessions_expires_idx on console_sessions (expires);
  `,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(db, 'drop table console_sessions;')
}
