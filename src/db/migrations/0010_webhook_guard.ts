import { type Kysely, sql } from 'kysely'

/**
 * The guard of an audited write that leaves out the webhook fan-out (src/outbox/webhook-fan-out.ts): true
 * while no webhook endpoint is active; otherwise it fails the statement — nothing of it is written — with
 * SQLSTATE TW001, and the writer runs the statement again with its fan-out. Opening the outbox table and
 * its indexes for a fan-out that finds no endpoint cost more database time per write than the audit event
 * itself (docs/performance.md); the guard is one look at the small webhooks table, in the statement's own
 * snapshot, so an endpoint is never missed by a write that the guard let through.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // One statement, sent whole: executeScript would split the body at its semicolons.
  await sql
    .raw(`
    create function tenantry_no_active_webhook() returns boolean language plpgsql volatile as $$
    begin
      if exists (select 1 from webhooks where active) then
        raise exception using errcode = 'TW001', message = 'an active webhook endpoint needs the fan-out';
      end if;
      return true;
    end
    $$`)
    .execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw('drop function tenantry_no_active_webhook()').execute(db)
}
