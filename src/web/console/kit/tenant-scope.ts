import type { paths } from '../../../../generated/openapi.js'
import type { SafeHtml } from '../../../html.js'
import type { TypedApp } from '../../../http/typed-app.js'
import type { Choice } from './forms.js'
import { TenantPath } from './inputs.js'
import { type ConsolePages, type PageResult, permissionsIn, type Signed } from './pages.js'
import { called } from './refusals.js'

/**
 * What the pages belonging to one tenant (API keys, SCIM, webhooks, …) share: reading the tenant they are
 * under, their breadcrumb trail, and the tenant's roles as choices with the role ceiling made visible.
 */
export type TenantOf =
  paths['/v1/tenants/{tenantId}']['get']['responses'][200]['content']['application/json']['result']

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The tenant a page is under, with its ETag; a refusal (another's tenant: 404) is thrown. */
export async function readTenantFor(
  signed: Signed,
  tenantId: string,
): Promise<{ tenant: TenantOf; etag: string }> {
  const { data, response } = await called(
    signed.api.GET('/v1/tenants/{tenantId}', { params: { path: { tenantId } } }),
  )
  return { tenant: data.result, etag: response.headers.get('etag') ?? '' }
}

/** What a typed client call answers: its body on success, else the error body and the status. */
interface ApiAnswer<T> {
  data?: { result: T } | undefined
  error?: unknown
  response: Response
}

/**
 * The tenant and one record of it named in the path (an integration, a webhook, an identity provider),
 * with the record's ETag for its edit form. The path's ids are UUIDs (the route's schema); another
 * tenant's record is the API's own 404, thrown.
 */
export async function readRecordFor<T>(
  signed: Signed,
  tenantId: string,
  recordId: string,
  get: (tenantId: string, recordId: string) => Promise<ApiAnswer<T>>,
): Promise<{ tenant: TenantOf; record: T; etag: string }> {
  const read = await readTenantFor(signed, tenantId)
  const { data, response } = await called(get(read.tenant.id, recordId))
  if (!data) throw new Error(`${response.url || 'A record read'} answered ${response.status} without a body`)
  return { tenant: read.tenant, record: data.result, etag: response.headers.get('etag') ?? '' }
}

/** A tenant's list page ("Roles of Acme", …): 200, under the tenant's crumbs, in the Tenants area. */
export function tenantListPage(signed: Signed, tenant: TenantOf, label: string, body: SafeHtml): PageResult {
  return [
    200,
    signed.page(
      {
        title: `${label} of ${tenant.name}`,
        area: 'tenants',
        crumbs: tenantCrumbs(tenant, [label, undefined]),
      },
      body,
    ),
  ]
}

/**
 * The list page of a tenant's records (webhooks, identity providers, roles): the tenant the path names
 * (another's is the API's own 404, thrown), its records as the API lists them, drawn by `body` under
 * the tenant's crumbs as "<label> of <tenant>".
 */
export function tenantListRoute<Item>(
  router: TypedApp,
  pages: ConsolePages,
  path: string,
  label: string,
  list: {
    read: (signed: Signed, tenant: TenantOf) => Promise<ApiAnswer<Item[]>>
    body: (signed: Signed, tenant: TenantOf, items: Item[]) => SafeHtml
  },
): void {
  router.get(path, { schema: { hide: true, params: TenantPath } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenant } = await readTenantFor(signed, request.params.tenantId)
      const { data } = await called(list.read(signed, tenant))
      return tenantListPage(signed, tenant, label, list.body(signed, tenant, data.result))
    }),
  )
}

/** Tenants › {tenant} › {section} › … : the trail of a page under a tenant. */
export function tenantCrumbs(
  tenant: { id: string; name: string },
  ...rest: [string, string | undefined][]
): [string, string | undefined][] {
  return [['Tenants', '/console/tenants'], [tenant.name, `/console/tenants/${tenant.id}`], ...rest]
}

/**
 * The tenant's active roles as form choices; a role holding a permission the person lacks in the tenant
 * is offered disabled, with the permissions it would hand out (the API refuses it: the role ceiling).
 */
export async function roleChoices(signed: Signed, tenant: TenantOf): Promise<Choice[]> {
  const [roles, names] = await Promise.all([
    signed.api.GET('/v1/tenants/{tenantId}/roles', { params: { path: { tenantId: tenant.id } } }),
    permissionNames(signed),
  ])
  const mine = permissionsIn(signed, [tenant.id, ...tenant.parentIds])
  return ceilingChoices(
    (roles.data?.result ?? []).filter((role) => role.active),
    mine,
    names,
  )
}

/** Permission id → name, from the catalogue (roles name their permissions by id). */
export async function permissionNames(signed: Signed): Promise<Map<string, string>> {
  const catalogue = await signed.api.GET('/v1/permissions')
  return new Map((catalogue.data?.result ?? []).map((p) => [p.id, p.name as string]))
}

/** Roles as choices, those granting a permission the person does not hold disabled with the reason. */
export function ceilingChoices(
  roles: { id: string; name: string; permissions: string[] }[],
  mine: Set<string>,
  names: Map<string, string>,
): Choice[] {
  return roles.map((role) => {
    const beyond = role.permissions.map((id) => names.get(id) ?? id).filter((name) => !mine.has(name))
    return {
      value: role.id,
      text: role.name,
      disabledBecause: beyond.length
        ? `you may not assign it: it grants ${beyond.join(', ')}, which you do not hold here`
        : undefined,
    }
  })
}
