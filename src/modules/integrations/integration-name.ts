import { tenantNameKey } from '../tenants/tenant-name.js'

/**
 * Integration names are unique per tenant under the same rule as tenant names (docs/api.md#tenants): Unicode
 * NFKC, case-folded, trimmed, inner whitespace collapsed — "Zendesk", " zendesk " and "ZENDESK" collide
 * in one tenant. The unique index (tenant_id, name_key) judges concurrent creates.
 */
export function integrationNameKey(name: string): string {
  return tenantNameKey(name)
}
