import type { IntegrationRow } from '../../db/schema.js'
import { maskProperties, type StoredProperties } from './integration-secrets.js'
import { type IntegrationType, isIntegrationType } from './integration-types.js'
import type { Integration } from './integrations.schemas.js'

/** An integration as the API shows it: its properties with every secret masked. */
export function typeOf(row: IntegrationRow): IntegrationType {
  if (!isIntegrationType(row.type)) throw new Error(`integration ${row.id} has an unknown type ${row.type}`)
  return row.type
}

export function toIntegration(row: IntegrationRow): Integration {
  const type = typeOf(row)
  return {
    id: row.id,
    tenantId: row.tenant_id,
    type,
    name: row.name,
    description: row.description,
    active: row.active,
    properties: maskProperties(type, row.properties as StoredProperties),
    createdBy: row.created_by,
    updatedBy: row.updated_by,
    created: row.created.toISOString(),
    updated: row.updated.toISOString(),
  }
}
