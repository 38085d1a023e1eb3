import { type Kysely, sql } from 'kysely'
import { executeScript } from '../script.js'

/**
 * Sessions (docs/security.md, "Sessions"): every user token belongs to one sign-in, a row here; the token
 * carries its id (`sid`). A session ends when someone revokes it (`revoked_at`) or its time runs out
 * (`expires_at`, the token's own expiry).
 *
 * `revoked_at` is stamped with the database's clock (`statement_timestamp()`), by the trigger below and by
 * the sessions module alike: every process learns of revocations by asking "which sessions were revoked
 * since <the database's time at my last look>" (modules/auth/session-revocations.ts), which only works if
 * every stamp comes from that one clock. The partial index serves that question and nothing else.
 *
 * The trigger is the one rule that a changed password, a disabled or an erased person end every session,
 * whatever path made the change (an administrator, a reset link, erasure, SCIM, SQL by hand), in the
 * change's own transaction. A first password (none before) ends nothing: a single sign-on session of
 * that person was not won with a password.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    create domain auth_method as text
      constraint auth_method_check check (value in ('pwd', 'otp', 'hwk', 'swk', 'sso', 'rec'));
    create table user_sessions (
      id uuid primary key,
      user_id uuid not null references users (id),
      created timestamptz not null,
      last_seen timestamptz not null,
      ip text,
      user_agent text,
      auth_methods auth_method[] not null,
      revoked_at timestamptz,
      expires_at timestamptz not null
    );
    create index user_sessions_live_idx on user_sessions (user_id, created) where revoked_at is null;
    create index user_sessions_revoked_idx on user_sessions (revoked_at) where revoked_at is not null;
    create index user_sessions_expires_idx on user_sessions (expires_at);
  `,
  )
  // One statement, sent whole: executeScript would split the body at its semicolons.
  await sql
    .raw(`
    create function tenantry_end_user_sessions() returns trigger language plpgsql as $$
    begin
      update user_sessions set revoked_at = statement_timestamp()
      where user_id = new.id and revoked_at is null;
      return null;
    end
    $$`)
    .execute(db)
  await executeScript(
    db,
    `
    create trigger users_end_sessions after update of password_hash, status on users
    for each row when (
      (old.password_hash is not null and new.password_hash is distinct from old.password_hash)
      or (new.status in ('disabled', 'erased') and new.status is distinct from old.status)
    ) execute function tenantry_end_user_sessions();
  `,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    drop trigger users_end_sessions on users;
    drop function tenantry_end_user_sessions();
    drop table user_sessions;
    drop domain auth_method;
  `,
  )
}
