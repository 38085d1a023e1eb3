import type { Kysely } from 'kysely'
import type { Database } from '../../db/schema.js'

/** SQL of the sign-in flows (docs/sso.md): started logins, used assertions, who may sign in where. */

export async function insertSsoRequest(
  db: Kysely<Database>,
  row: {
    id: string
    providerId: string
    kind: 'saml' | 'oidc'
    codeVerifier?: string
    nonce?: string
    returnTo: string | null
    created: Date
    expires: Date
    /** A test sign-in's login (sso_tests): its answer is reported, never used. */
    testId?: string
  },
): Promise<void> {
  await db
    .insertInto('sso_requests')
    .values({
      id: row.id,
      provider_id: row.providerId,
      kind: row.kind,
      code_verifier: row.codeVerifier ?? null,
      nonce: row.nonce ?? null,
      return_to: row.returnTo,
      test_id: row.testId ?? null,
      created: row.created,
      expires: row.expires,
    })
    .execute()
}

export async function findSsoRequest(db: Kysely<Database>, providerId: string, id: string, now: Date) {
  return db
    .selectFrom('sso_requests')
    .selectAll()
    .where('id', '=', id)
    .where('provider_id', '=', providerId)
    .where('expires', '>', now)
    .executeTakeFirst()
}

/** Uses a started login up: it answers once, whichever process the IdP comes back to. */
export async function takeSsoRequest(db: Kysely<Database>, providerId: string, id: string, now: Date) {
  return db
    .deleteFrom('sso_requests')
    .where('id', '=', id)
    .where('provider_id', '=', providerId)
    .where('expires', '>', now)
    .returningAll()
    .executeTakeFirst()
}

export async function deleteExpiredSsoRequests(db: Kysely<Database>, now: Date): Promise<void> {
  await db.deleteFrom('sso_requests').where('expires', '<=', now).execute()
  await db.deleteFrom('sso_used_assertions').where('expires', '<=', now).execute()
  await db.deleteFrom('sso_tests').where('expires', '<=', now).execute()
}

/** Records an accepted assertion id; false when it was already used (a replay), in any process. */
export async function rememberAssertion(
  db: Kysely<Database>,
  providerId: string,
  assertionId: string,
  expires: Date,
): Promise<boolean> {
  const inserted = await db
    .insertInto('sso_used_assertions')
    .values({ provider_id: providerId, assertion_id: assertionId, expires })
    .onConflict((oc) => oc.columns(['provider_id', 'assertion_id']).doNothing())
    .returning('assertion_id')
    .executeTakeFirst()
  return inserted !== undefined
}

/** The enabled user with this e-mail and an accepted membership in this (active) tenant, if any. */
export async function findSignInMember(db: Kysely<Database>, tenantId: string, email: string) {
  return db
    .selectFrom('users as u')
    .innerJoin('tenant_users as tu', 'tu.user_id', 'u.id')
    .innerJoin('tenants as t', 't.id', 'tu.tenant_id')
    .select(['u.id', 'u.email'])
    .where('u.email', '=', email.trim().toLowerCase())
    .where('u.status', '!=', 'disabled')
    .where('tu.tenant_id', '=', tenantId)
    .where('tu.status', '=', 'accepted')
    .where('t.active', '=', true)
    .executeTakeFirst()
}

export async function findUserByEmail(db: Kysely<Database>, email: string) {
  return db
    .selectFrom('users')
    .select(['id', 'default_tenant'])
    .where('email', '=', email.trim().toLowerCase())
    .executeTakeFirst()
}

export async function findTenantLogin(db: Kysely<Database>, tenantId: string) {
  return db
    .selectFrom('tenants')
    .select(['id', 'active', 'cxengage_identity_provider', 'default_identity_provider'])
    .where('id', '=', tenantId)
    .executeTakeFirst()
}
