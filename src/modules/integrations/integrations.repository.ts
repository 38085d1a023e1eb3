import type { Insertable, Kysely, Updateable } from 'kysely'
import { withConstraintErrors } from '../../db/constraint-errors.js'
import type { Database, IntegrationRow, IntegrationsTable } from '../../db/schema.js'
import { updateTenantOwnedRow } from '../../http/request-context.js'
import type { AuditEvent } from '../../outbox/audit-event.js'
import { recordInsert, type UnitInsert } from '../../outbox/write-unit.js'

/** SQL for integrations. Each function takes the executor (db or transaction) first, then the tenant. */

/**
 * A new integration and its `integration.created` event, written by the write unit
 * (outbox/write-unit.ts). A taken id is integration_exists, a taken name integration_name_taken.
 */
export function integrationInsert(
  row: Insertable<IntegrationsTable>,
  event: AuditEvent,
): UnitInsert<{ id: string }> {
  return recordInsert('integrations', row, {
    event,
    returning: 'id',
    // The name's key is unique in its tenant; ids are usually made here, and a client's own id that is
    // taken fails its batch and is then refused alone.
    uniqueKey: `${row.tenant_id}\u0000${row.name_key}`,
    constraints: { name: row.name },
  })
}

export async function findIntegration(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<IntegrationRow | undefined> {
  let query = db.selectFrom('integrations').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id)
  if (options.forUpdate) query = query.forUpdate()
  return query.executeTakeFirst()
}

/**
 * One statement: the write and, when the request carried If-Match, the check that the row is still the
 * version the caller read (db/row-version.ts). 'stale': nothing written, the If-Match names another version.
 */
export async function updateIntegration(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
  changes: Updateable<IntegrationsTable> & { updated: Date },
): Promise<IntegrationRow | 'stale' | undefined> {
  return withConstraintErrors(() => updateTenantOwnedRow(db, 'integrations', tenantId, id, changes), {
    name: changes.name as string | undefined,
  })
}

/** Deletes an integration and with it its encrypted secrets; the deleted row, or undefined. */
export async function deleteIntegration(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
): Promise<IntegrationRow | undefined> {
  return db
    .deleteFrom('integrations')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
}
