import type { Kysely } from 'kysely'
import { executeScript } from '../script.js'

/**
 * Second factors (docs/security.md, "Second factors"): a person's authenticator apps (TOTP) and passkeys,
 * their recovery codes, and the challenges a sign-in, a step-up or a passkey's enrolment answers.
 *
 * - `user_factors`: one row a factor. A TOTP key is kept only as a SecretEnvelope (crypto/secrets.ts,
 *   AES-GCM bound to the factor's id), and `totp_last_step` is the last time step accepted, so a code is
 *   taken once. A passkey keeps what WebAuthn needs to check an assertion: the credential id, its public
 *   key (COSE) and the signature counter, which may only grow. `pending` rows (a TOTP key not yet
 *   confirmed with a code) count for nothing and are swept after ten minutes.
 * - `recovery_codes`: keyed hashes only (never the codes), each spent once (`used_at`).
 * - `mfa_challenges`: single use (`used_at`), bound to one account (none for a passkey sign-in with a
 *   discoverable credential, where the passkey names the account) and one purpose, five minutes; wrong
 *   answers are counted per challenge (`attempts`). Found by a hash of the token the client holds.
 *
 * Closed lists are domains and the tables carry no CHECK constraint (migration 0012 says why: a table's
 * checks are re-planned by every write). Which columns a TOTP row or a passkey row fills is the factor
 * repository's to keep (modules/mfa/factors.repository.ts), not a table check.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    create domain factor_type as text constraint factor_type_check check (value in ('totp', 'webauthn'));
    create domain factor_status as text constraint factor_status_check check (value in ('pending', 'active'));
    create domain mfa_challenge_purpose as text constraint mfa_challenge_purpose_check
      check (value in ('sign_in', 'step_up', 'passkey_sign_in', 'webauthn_registration'));
    create table user_factors (
      id uuid primary key,
      user_id uuid not null references users (id),
      type factor_type not null,
      name text not null,
      status factor_status not null,
      created timestamptz not null,
      last_used timestamptz,
      totp_secret jsonb,
      totp_last_step bigint,
      credential_id text constraint user_factors_credential_id_key unique,
      public_key bytea,
      sign_count bigint,
      transports text[],
      device_type text
    );
    create index user_factors_user_idx on user_factors (user_id);
    create index user_factors_pending_idx on user_factors (created) where status = 'pending';
    create table recovery_codes (
      user_id uuid not null references users (id),
      code_hash text not null,
      created timestamptz not null,
      used_at timestamptz,
      primary key (user_id, code_hash)
    );
    create table mfa_challenges (
      id uuid primary key,
      token_hash text not null constraint mfa_challenges_token_hash_key unique,
      user_id uuid references users (id),
      purpose mfa_challenge_purpose not null,
      session_id uuid references user_sessions (id) on delete cascade,
      webauthn_challenge text,
      token_ttl integer,
      attempts integer not null default 0,
      created timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz
    );
    create index mfa_challenges_expires_idx on mfa_challenges (expires_at);
  `,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    drop table mfa_challenges;
    drop table recovery_codes;
    drop table user_factors;
    drop domain mfa_challenge_purpose;
    drop domain factor_status;
    drop domain factor_type;
  `,
  )
}
