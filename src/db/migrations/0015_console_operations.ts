import type { Kysely } from 'kysely'
import { executeScript } from '../script.js'

/**
 * What the console's operations routes store (docs/api.md#the-consoles-operations-routes; docs/webhooks.md, docs/sso.md).
 *
 * - `webhooks.previous_secret` / `previous_secret_expires`: after `POST …/rotate-secret`, the replaced
 *   signing secret (an AES-GCM envelope like `secret`, bound to its own associated data) and until when
 *   deliveries are signed with it too (24 h). Past that instant it is ignored and the next rotation
 *   overwrites it.
 * - `sso_tests`: a test sign-in of an identity provider (`POST …/identity-providers/{id}/test`) and what
 *   the provider asserted when it came back; nobody is signed in by it. `sso_test_status` is a domain, as
 *   every closed list is (migration 0012).
 * - `sso_requests.test_id`: a started login that belongs to a test, so the ACS / callback reports it
 *   instead of signing anyone in.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    alter table webhooks add column previous_secret jsonb;
    alter table webhooks add column previous_secret_expires timestamptz;

    create domain sso_test_status as text
      constraint sso_test_status_check check (value in ('pending', 'started', 'succeeded', 'failed'));
    create table sso_tests (
      tenant_id uuid not null references tenants (id),
      provider_id uuid not null,
      id uuid not null,
      status sso_test_status not null,
      email text,
      name_id text,
      attributes jsonb,
      error text,
      member_found boolean,
      created timestamptz not null,
      created_by uuid not null,
      started timestamptz,
      completed timestamptz,
      expires timestamptz not null,
      constraint sso_tests_pkey primary key (tenant_id, provider_id, id)
    );
    create unique index sso_tests_id_key on sso_tests (id);
    create index sso_tests_expires_idx on sso_tests (expires);

    alter table sso_requests add column test_id uuid;
  `,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    alter table sso_requests drop column test_id;
    drop table sso_tests;
    drop domain sso_test_status;
    alter table webhooks drop column previous_secret_expires;
    alter table webhooks drop column previous_secret;
  `,
  )
}
