import type { Kysely } from 'kysely'
import { executeScript } from '../script.js'

/**
 * The audit trail's tenant index holds only events that have a tenant. Platform events (user.created,
 * user.updated, user.erased …) have none and are never read through it — the tenant endpoint filters on
 * tenant_id, which implies it is not null — so every user create, and every row of a bulk load, writes
 * one index entry fewer (docs/performance.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    drop index audit_events_tenant_idx;
    create index audit_events_tenant_idx on audit_events (tenant_id, occurred desc, id desc)
      where tenant_id is not null;
  `,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    drop index audit_events_tenant_idx;
    create index audit_events_tenant_idx on audit_events (tenant_id, occurred desc, id desc);
  `,
  )
}
