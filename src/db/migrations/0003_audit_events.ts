import type { Kysely } from 'kysely'
import { executeScript } from '../script.js'

/**
 * The audit trail (docs/webhooks.md): one row per change the API makes, written in the change's own
 * transaction. Append-only through the API; erasure (docs/product.md#offboarding-and-erasure) rewrites the personal data inside rows.
 *
 * Keys lead with what the readers filter by: a tenant's events newest first (the tenant endpoint reads
 * a tenant and its sub-tenants), and the platform's events newest first. `id` is a UUIDv7, so ordering
 * by (occurred, id) is also insertion order and serves keyset pagination.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    create table audit_events (
      id uuid primary key,
      occurred timestamptz not null,
      actor_type text not null check (actor_type in ('user', 'apiKey', 'system')),
      actor_id uuid,
      action text not null,
      tenant_id uuid,
      target_type text not null,
      target_id uuid,
      changes jsonb not null default '{}',
      request_id text,
      ip text
    );
    create index audit_events_tenant_idx on audit_events (tenant_id, occurred desc, id desc);
    create index audit_events_occurred_idx on audit_events (occurred desc, id desc);
    create index audit_events_target_idx on audit_events (target_id);
    create index audit_events_actor_idx on audit_events (actor_id);
  `,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(db, 'drop table audit_events')
}
