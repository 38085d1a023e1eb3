import { permissionsIn, type Signed } from '../kit/pages.js'
import { readTenantFor, tenantCrumbs } from '../kit/tenant-scope.js'

/** The tenant a members page is under, with the permissions the person holds there. */
export async function tenantWithPermissions(signed: Signed, tenantId: string) {
  const { tenant: t } = await readTenantFor(signed, tenantId)
  return { tenant: t, permissions: permissionsIn(signed, [t.id, ...t.parentIds]) }
}

/** Tenants › {tenant} › Members › {last}. */
export function memberCrumbs(tenant: { id: string; name: string }, last?: string) {
  return tenantCrumbs(
    tenant,
    ['Members', last ? `/console/tenants/${tenant.id}/members` : undefined],
    ...(last ? ([[last, undefined]] as [string, undefined][]) : []),
  )
}
