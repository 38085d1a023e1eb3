import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import { decryptSecret, encryptSecret, isSecretEnvelope, type SecretEnvelope } from '../../crypto/secrets.js'
import { newId } from '../../crypto/uuid7.js'
import type { IdentityProviderRow } from '../../db/schema.js'
import { AppError, invalidField } from '../../errors.js'
import { preconditionFailed } from '../../http/etag.js'
import { createOutboundFetch, OutboundRefusedError, outboundPolicy } from '../../http/outbound.js'
import { checkOutboundAddress } from '../../http/outbound-save-check.js'
import { updateTenantOwnedRow } from '../../http/request-context.js'
import { MASKED, recordAudit } from '../audit/audit.repository.js'
import { requireRecentSecondFactor } from '../mfa/step-up.js'
import { requireTenantPermission } from '../tenants/tenant-access.js'
import { identityProviderChanges, providerSettings } from './identity-provider-audit.js'
import {
  findTenantIdentityProvider,
  insertIdentityProvider,
  listTenantIdentityProviders,
} from './identity-providers.repository.js'
import {
  type CreateIdentityProviderInput,
  type IdentityProvider,
  SECRET_MASK,
  type UpdateIdentityProviderInput,
} from './identity-providers.schemas.js'
import { discoverOidc } from './oidc-client.js'
import { MetadataError, metadataText, parseIdpMetadata } from './saml-metadata.js'
import { serviceProviderUrls } from './sso-urls.js'

const READ = ['IDENTITY_PROVIDERS_READ', 'IDENTITY_PROVIDERS_UPDATE'] as const
const WRITE = ['IDENTITY_PROVIDERS_UPDATE'] as const

export function identityProviderNotFound(): AppError {
  return new AppError('identity_provider_not_found', 'No such identity provider in this tenant')
}

/** The client secret is bound to its tenant, provider and field: a copied ciphertext does not decrypt. */
function secretAad(tenantId: string, id: string): string {
  return `identity_provider:${tenantId}:${id}:clientSecret`
}

export function openClientSecret(ctx: ServiceContext, row: IdentityProviderRow): string {
  if (!isSecretEnvelope(row.client_secret)) return ''
  return decryptSecret(ctx.keys, row.client_secret as SecretEnvelope, secretAad(row.tenant_id, row.id))
}

export function toIdentityProvider(ctx: ServiceContext, row: IdentityProviderRow): IdentityProvider {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    ...providerSettings(row),
    metadataFile: row.metadata_url ? null : row.metadata_xml,
    clientSecret: isSecretEnvelope(row.client_secret) ? SECRET_MASK : '',
    serviceProvider: serviceProviderUrls(ctx.config, row.id),
    created: row.created.toISOString(),
    createdBy: row.created_by,
    updated: row.updated.toISOString(),
    updatedBy: row.updated_by,
  }
}

export async function listIdentityProviders(ctx: ServiceContext, actor: Actor, tenantId: string) {
  await requireTenantPermission(ctx, actor, tenantId, READ)
  return (await listTenantIdentityProviders(ctx.db, tenantId)).map((row) => toIdentityProvider(ctx, row))
}

export async function getIdentityProvider(ctx: ServiceContext, actor: Actor, tenantId: string, id: string) {
  await requireTenantPermission(ctx, actor, tenantId, READ)
  const row = await findTenantIdentityProvider(ctx.db, tenantId, id)
  if (!row) throw identityProviderNotFound()
  return toIdentityProvider(ctx, row)
}

/** The IdP metadata XML from a URL (under the outbound rule) or a file; unusable → 400 on that field. */
async function loadSamlMetadata(
  ctx: ServiceContext,
  source: { url?: string | null; file?: string | null },
): Promise<string> {
  if (source.url) {
    let xml: string
    try {
      const policy = outboundPolicy(ctx.config, ctx.outboundLookup)
      // Where the URL points is judged before anything is fetched (docs/webhooks.md#the-outbound-rule); connecting checks again.
      await checkOutboundAddress(source.url, policy)
      const response = await createOutboundFetch(policy)(source.url)
      if (!response.ok) throw new MetadataError(`answered HTTP ${response.status}`)
      xml = await response.text()
      await parseIdpMetadata(xml)
    } catch (error) {
      const problem =
        error instanceof OutboundRefusedError
          ? `is not allowed: ${error.message} (outbound rule: https, public addresses only)`
          : error instanceof MetadataError
            ? `does not give usable SAML metadata: it ${error.message}`
            : 'could not be fetched'
      throw invalidField('metadata-url', problem, `metadataUrl ${problem}`)
    }
    return xml
  }
  if (source.file) {
    const xml = metadataText(source.file)
    try {
      await parseIdpMetadata(xml)
    } catch (error) {
      throw invalidField('metadataFile', `is not usable SAML metadata: it ${(error as Error).message}`)
    }
    return xml
  }
  throw invalidField(
    'metadata-url',
    'is required (or metadataFile)',
    'A SAML provider needs metadataUrl or metadataFile',
  )
}

/** An OIDC issuer must answer discovery under the outbound rule; otherwise 400 on `issuer`. */
async function checkIssuer(
  ctx: ServiceContext,
  issuer: string,
  clientId: string,
  secret: string,
): Promise<void> {
  const policy = outboundPolicy(ctx.config, ctx.outboundLookup)
  try {
    await checkOutboundAddress(issuer, policy)
    await discoverOidc({ issuer, clientId, clientSecret: secret }, createOutboundFetch(policy), policy)
  } catch (error) {
    const refused =
      error instanceof OutboundRefusedError || (error as Error).cause instanceof OutboundRefusedError
    const problem = refused
      ? 'is not allowed by the outbound rule (https, public addresses only)'
      : 'does not answer OpenID Connect discovery'
    throw invalidField('issuer', problem)
  }
}

interface ProtocolFields {
  metadata_url: string | null
  metadata_xml: string | null
  issuer: string | null
  client_id: string | null
  secret: string
}

export async function createIdentityProvider(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  input: CreateIdentityProviderInput,
): Promise<IdentityProvider> {
  await requireTenantPermission(ctx, actor, tenantId, WRITE)
  // Who controls a tenant's identity provider signs in as its members: a step-up operation.
  await requireRecentSecondFactor(ctx, actor)
  const id = newId()
  const fields = await protocolFields(ctx, input.identityProvider, input, undefined)
  const now = ctx.clock.now()
  const row = await ctx.db.transaction().execute(async (trx) => {
    const inserted = await insertIdentityProvider(trx, {
      id,
      tenant_id: tenantId,
      name: input.name.trim(),
      description: input.description ?? '',
      active: input.active ?? true,
      protocol: input.identityProvider,
      email_mapping: emailMapping(input.identityProvider, input.emailMapping),
      metadata_url: fields.metadata_url,
      metadata_xml: fields.metadata_xml,
      issuer: fields.issuer,
      client_id: fields.client_id,
      client_secret: fields.secret
        ? JSON.stringify(encryptSecret(ctx.keys, fields.secret, secretAad(tenantId, id)))
        : null,
      created: now,
      created_by: actor.principalId,
      updated: now,
      updated_by: actor.principalId,
    })
    await recordAudit(trx, ctx.clock, actor, {
      action: 'identity_provider.created',
      tenantId,
      target: { type: 'identityProvider', id },
      changes: identityProviderChanges(undefined, inserted),
    })
    return inserted
  })
  return toIdentityProvider(ctx, row)
}

export async function updateIdentityProviderById(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  id: string,
  input: UpdateIdentityProviderInput,
): Promise<IdentityProvider> {
  await requireTenantPermission(ctx, actor, tenantId, WRITE)
  const current = await findTenantIdentityProvider(ctx.db, tenantId, id)
  if (!current) throw identityProviderNotFound()
  await requireRecentSecondFactor(ctx, actor)
  if (input.identityProvider !== undefined && input.identityProvider !== current.protocol)
    throw invalidField('identityProvider', 'cannot change; create another provider')
  const fields = await protocolFields(ctx, current.protocol, input, current)
  const secretChanged = fields.secret !== openClientSecret(ctx, current)
  const row = await ctx.db.transaction().execute(async (trx) => {
    const updated = await updateTenantOwnedRow(trx, 'identity_providers', tenantId, id, {
      ...(input.name !== undefined ? { name: input.name.trim() } : {}),
      ...(input.description !== undefined ? { description: input.description ?? '' } : {}),
      ...(input.active !== undefined ? { active: input.active } : {}),
      ...(input.emailMapping !== undefined
        ? { email_mapping: emailMapping(current.protocol, input.emailMapping) }
        : {}),
      metadata_url: fields.metadata_url,
      metadata_xml: fields.metadata_xml,
      issuer: fields.issuer,
      client_id: fields.client_id,
      ...(secretChanged
        ? {
            client_secret: fields.secret
              ? JSON.stringify(encryptSecret(ctx.keys, fields.secret, secretAad(tenantId, id)))
              : null,
          }
        : {}),
      updated: ctx.clock.now(),
      updated_by: actor.principalId,
    })
    if (updated === 'stale') throw preconditionFailed()
    if (!updated) throw identityProviderNotFound()
    const changes = identityProviderChanges(current, updated)
    if (secretChanged)
      changes.clientSecret = [current.client_secret ? MASKED : '', fields.secret ? MASKED : '']
    await recordAudit(trx, ctx.clock, actor, {
      action: 'identity_provider.updated',
      tenantId,
      target: { type: 'identityProvider', id },
      changes,
    })
    return updated
  })
  return toIdentityProvider(ctx, row)
}

/** Protocol settings after a create or an update, checked against the outside world when they change. */
async function protocolFields(
  ctx: ServiceContext,
  protocol: 'saml' | 'oidc',
  input: UpdateIdentityProviderInput,
  current: IdentityProviderRow | undefined,
): Promise<ProtocolFields> {
  if (protocol === 'saml') {
    const url =
      input.metadataUrl !== undefined ? input.metadataUrl : input.metadataFile ? null : current?.metadata_url
    const file = input.metadataFile !== undefined ? input.metadataFile : null
    const unchanged = current && input.metadataUrl === undefined && input.metadataFile === undefined
    const xml = unchanged ? current.metadata_xml : await loadSamlMetadata(ctx, { url, file })
    return { metadata_url: url ?? null, metadata_xml: xml, issuer: null, client_id: null, secret: '' }
  }
  const issuer = (input.issuer !== undefined ? input.issuer : current?.issuer) ?? ''
  const clientId = (input.clientId !== undefined ? input.clientId : current?.client_id) ?? ''
  const secret =
    input.clientSecret === undefined || input.clientSecret === SECRET_MASK
      ? current
        ? openClientSecret(ctx, current)
        : ''
      : (input.clientSecret ?? '')
  if (!issuer) throw invalidField('issuer', 'is required for an OpenID Connect provider')
  if (!clientId) throw invalidField('clientId', 'is required for an OpenID Connect provider')
  if (!secret) throw invalidField('clientSecret', 'is required for an OpenID Connect provider')
  const changed = !current || issuer !== current.issuer || clientId !== current.client_id
  if (changed) await checkIssuer(ctx, issuer, clientId, secret)
  return { metadata_url: null, metadata_xml: null, issuer, client_id: clientId, secret }
}

function emailMapping(protocol: 'saml' | 'oidc', value: string | null | undefined): string {
  const trimmed = value?.trim()
  return trimmed ? trimmed : protocol === 'saml' ? 'NameID' : 'email'
}
