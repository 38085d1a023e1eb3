import type { Kysely } from 'kysely'
import { executeScript } from '../script.js'

/**
 * Single sign-on (docs/sso.md).
 * - identity_providers: a tenant's SAML 2.0 or OpenID Connect providers. The OIDC client secret is a
 *   SecretEnvelope (crypto/secrets.ts), never plaintext. Looked up by id alone on the browser routes
 *   (/v1/sso/{providerId}/…), by tenant on the admin routes.
 * - sso_requests: the logins this service started (a SAML AuthnRequest id, or an OIDC state with its PKCE
 *   verifier and nonce). In the database, so that the IdP may answer any process; each is used once.
 * - sso_used_assertions: ids of the SAML assertions already accepted, per provider, until they expire:
 *   the replay cache every process shares.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    create table identity_providers (
      id uuid primary key,
      tenant_id uuid not null references tenants (id),
      name text not null,
      description text not null default '',
      active boolean not null default true,
      protocol text not null check (protocol in ('saml', 'oidc')),
      email_mapping text not null,
      metadata_url text,
      metadata_xml text,
      issuer text,
      client_id text,
      client_secret jsonb,
      created timestamptz not null,
      created_by uuid not null,
      updated timestamptz not null,
      updated_by uuid not null
    );
    create index identity_providers_tenant_idx on identity_providers (tenant_id, id);

    create table sso_requests (
      id text primary key,
      provider_id uuid not null references identity_providers (id),
      kind text not null check (kind in ('saml', 'oidc')),
      code_verifier text,
      nonce text,
      return_to text,
      created timestamptz not null,
      expires timestamptz not null
    );
    create index sso_requests_expires_idx on sso_requests (expires);

    create table sso_used_assertions (
      provider_id uuid not null,
      assertion_id text not null,
      expires timestamptz not null,
      primary key (provider_id, assertion_id)
    );
  `,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    'drop table sso_used_assertions; drop table sso_requests; drop table identity_providers',
  )
}
