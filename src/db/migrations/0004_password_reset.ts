import type { Kysely } from 'kysely'
import { executeScript } from '../script.js'

/**
 * Password reset (docs/api.md#passwords-and-the-existing-clients-flows). A user has at most one live reset link: its token's SHA-256 sits on the
 * user row beside its expiry (`reset_password_expiry_date`, a field of the brief), so a newer link
 * replaces the older one by overwriting it, and using the link clears both. The unique index finds the
 * user from a token. The reset e-mails are outbox rows found by user (the record's delivery state).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    alter table users add column reset_password_token_hash text;
    create unique index users_reset_password_token_idx on users (reset_password_token_hash)
      where reset_password_token_hash is not null;
    create index outbox_password_reset_idx on outbox ((payload->>'userId'), created)
      where kind = 'password_reset_email';
  `,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    drop index outbox_password_reset_idx;
    drop index users_reset_password_token_idx;
    alter table users drop column reset_password_token_hash;
  `,
  )
}
