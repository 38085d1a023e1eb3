import type { Kysely } from 'kysely'
import { executeScript } from '../script.js'

/**
 * Webhooks, their delivery attempts, ordered outbox rows, erased users and the invitation-expiry marker
 * (docs/webhooks.md, docs/product.md#offboarding-and-erasure).
 *
 * - `webhooks`: a tenant's endpoints; the signing secret is an AES-GCM envelope (crypto/secrets.ts).
 *   `failing_since` is when the current run of failed deliveries began (null while healthy).
 * - `webhook_deliveries`: one row per delivery attempt (GET …/webhooks/{id}/deliveries).
 * - `outbox.ordering_key` + `outbox.seq`: rows with the same key (a webhook's id) are delivered one at a
 *   time in `seq` order; mail rows have no key.
 * - `users.status` may be 'erased' (docs/product.md#offboarding-and-erasure): the record stays so that ids resolve.
 * - `tenant_users.invitation_expiry_announced`: the expiry date an `invitation.expired` event was written
 *   for, so the sweep writes it once whichever worker runs it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    create table webhooks (
      tenant_id uuid not null references tenants (id),
      id uuid not null,
      url text not null,
      events text[] not null,
      active boolean not null default true,
      include_sub_tenants boolean not null default false,
      secret jsonb not null,
      failing_since timestamptz,
      disabled_reason text,
      created timestamptz not null,
      created_by uuid not null,
      updated timestamptz not null,
      updated_by uuid not null,
      constraint webhooks_pkey primary key (tenant_id, id)
    );
    create unique index webhooks_id_key on webhooks (id);

    create table webhook_deliveries (
      tenant_id uuid not null,
      webhook_id uuid not null,
      id uuid not null,
      message_id uuid not null,
      event_id uuid,
      action text not null,
      attempt integer not null,
      outcome text not null check (outcome in ('succeeded', 'failed')),
      response_status integer,
      error text,
      duration_ms integer not null,
      attempted_at timestamptz not null,
      constraint webhook_deliveries_pkey primary key (tenant_id, webhook_id, id)
    );
    create index webhook_deliveries_attempted_idx on webhook_deliveries (attempted_at);

    alter table outbox add column ordering_key uuid;
    alter table outbox add column seq bigint generated always as identity;
    create index outbox_ordering_idx on outbox (ordering_key, seq) where status = 'queued';

    alter table users drop constraint users_status_check;
    alter table users add constraint users_status_check
      check (status in ('enabled', 'disabled', 'pending', 'invited', 'accepted', 'erased'));

    alter table tenant_users add column invitation_expiry_announced timestamptz;
    create index tenant_users_invitation_expiry_idx on tenant_users (invitation_expiry_date)
      where status = 'invited';
  `,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    drop index tenant_users_invitation_expiry_idx;
    alter table tenant_users drop column invitation_expiry_announced;
    alter table users drop constraint users_status_check;
    alter table users add constraint users_status_check
      check (status in ('enabled', 'disabled', 'pending', 'invited', 'accepted'));
    drop index outbox_ordering_idx;
    alter table outbox drop column seq;
    alter table outbox drop column ordering_key;
    drop table webhook_deliveries, webhooks;
  `,
  )
}
