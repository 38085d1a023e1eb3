import type { IdentityProviderRow } from '../../db/schema.js'
import { changesBetween, MASKED } from '../audit/audit.repository.js'

/**
 * A provider's plain settings under the names the API gives them: the one mapping its record
 * (identity-providers.service.ts) and its audit events share, so an event names a field as the API does.
 */
export function providerSettings(row: IdentityProviderRow) {
  return {
    name: row.name,
    description: row.description,
    active: row.active,
    identityProvider: row.protocol,
    emailMapping: row.email_mapping,
    metadataUrl: row.metadata_url,
    issuer: row.issuer,
    clientId: row.client_id,
  }
}

/** What an audit event shows of a provider: the plain settings (the secret only as "********"). */
export function identityProviderChanges(before: IdentityProviderRow | undefined, after: IdentityProviderRow) {
  const view = (row: IdentityProviderRow) => ({
    ...providerSettings(row),
    clientSecret: row.client_secret ? MASKED : '',
  })
  const fields = [
    'name',
    'description',
    'active',
    'identityProvider',
    'emailMapping',
    'metadataUrl',
    'issuer',
    'clientId',
  ] as const
  const changes = changesBetween(before ? view(before) : undefined, view(after), fields)
  if (!before && after.client_secret) changes.clientSecret = [null, MASKED]
  return changes
}
