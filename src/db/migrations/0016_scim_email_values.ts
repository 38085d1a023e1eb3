import { type Kysely, sql } from 'kysely'
import { executeScript } from '../script.js'

/**
 * Every e-mail address of a SCIM user, found by an index (docs/scim.md, "Compliance and scale"): a filter
 * `emails.value eq "…"` matches a user when any of its addresses matches (RFC 7644 §3.4.2.2), and
 * `scim_users.email_key` holds only the one the user's e-mail is taken from. `scim_email_keys` answers
 * the addresses of the stored attributes (`emails[].value`, trimmed and lower-cased, as
 * users/user-rules.ts normalizes an e-mail), and a GIN index on it serves `@> array[…]`; being an
 * expression index, it follows every write of the attributes with no code of ours.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // One statement, sent whole: executeScript would split the body at its semicolons.
  await sql
    .raw(`
    create function scim_email_keys(attributes jsonb) returns text[]
      language sql immutable strict parallel safe as $$
      select coalesce(array_agg(lower(btrim(email ->> 'value'))), '{}')
      from jsonb_array_elements(
        case jsonb_typeof(attributes -> 'emails') when 'array' then attributes -> 'emails' else '[]' end
      ) as emails(email)
      where email ->> 'value' is not null
    $$`)
    .execute(db)
  await executeScript(
    db,
    `create index scim_users_email_values_idx on scim_users using gin (scim_email_keys(attributes));`,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    drop index scim_users_email_values_idx;
    drop function scim_email_keys(jsonb);
  `,
  )
}
