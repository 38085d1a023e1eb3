import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import { AppError } from '../../errors.js'
import { listAcceptedMemberships } from '../auth/auth.repository.js'
import { activeProvidersOf } from './identity-providers.repository.js'
import type { MeTenant } from './identity-providers.schemas.js'
import { findTenantLogin, findUserByEmail } from './sso.repository.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export interface AuthInfo {
  tenantId: string | null
  identityProviders: { id: string; name: string }[]
  password: boolean
}

/** What a stranger learns about an e-mail nobody has, or a tenant that does not exist: the same shape. */
const UNKNOWN: AuthInfo = { tenantId: null, identityProviders: [], password: true }

/** Puts `preferred` first (a default identity provider is the one offered first). */
function preferring(list: { id: string; name: string }[], preferred: string | null | undefined) {
  const first = list.find((p) => p.id === preferred)
  return first ? [first, ...list.filter((p) => p !== first)] : list
}

/**
 * `GET /v1/auth-info/{email|tenantId}` (docs/sso.md): where a login page should send the person. For an
 * e-mail: its default tenant when it is a member there, else its first tenant; for a tenant id: that
 * tenant's providers and default.
 */
export async function authInfo(ctx: ServiceContext, key: string): Promise<AuthInfo> {
  if (UUID.test(key)) {
    const tenant = await findTenantLogin(ctx.db, key.toLowerCase())
    if (!tenant?.active) return UNKNOWN
    const providers = (await activeProvidersOf(ctx.db, [tenant.id])).get(tenant.id) ?? []
    return {
      tenantId: tenant.id,
      identityProviders: preferring(providers, tenant.default_identity_provider),
      password: tenant.cxengage_identity_provider === 'enabled',
    }
  }
  const user = await findUserByEmail(ctx.db, key)
  if (!user) return UNKNOWN
  const memberships = (await listAcceptedMemberships(ctx.db, user.id)).filter((m) => m.active)
  const chosen = memberships.find((m) => m.tenant_id === user.default_tenant) ?? memberships[0]
  if (!chosen) return UNKNOWN
  const providers = (await activeProvidersOf(ctx.db, [chosen.tenant_id])).get(chosen.tenant_id) ?? []
  return {
    tenantId: chosen.tenant_id,
    identityProviders: preferring(providers, chosen.default_identity_provider),
    password: chosen.password_allowed,
  }
}

/** `GET /v1/me` (docs/sso.md#3-who-may-sign-in-and-where-the-password-still-works): the caller's accepted tenants, whether its password counts there, and their providers. */
export async function describeMe(ctx: ServiceContext, actor: Actor): Promise<MeTenant[]> {
  if (actor.kind !== 'user')
    throw new AppError('permission_denied', 'GET /v1/me describes a user; an API key has none')
  const memberships = await listAcceptedMemberships(ctx.db, actor.userId)
  const providers = await activeProvidersOf(
    ctx.db,
    memberships.map((m) => m.tenant_id),
  )
  return memberships.map((m) => ({
    tenantId: m.tenant_id,
    name: m.tenant_name,
    description: m.tenant_description,
    active: m.active,
    password: m.password_allowed,
    identityProviders: preferring(providers.get(m.tenant_id) ?? [], m.default_identity_provider),
  }))
}
