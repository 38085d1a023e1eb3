import type { Updateable } from 'kysely'
import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import { newId } from '../../crypto/uuid7.js'
import type { IdentityProviderRow, SsoTestRow, SsoTestsTable } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { recordAudit } from '../audit/audit.repository.js'
import { requireTenantPermission } from '../tenants/tenant-access.js'
import { findIdentityProvider, findTenantIdentityProvider } from './identity-providers.repository.js'
import type { SsoTest } from './identity-providers.schemas.js'
import { identityProviderNotFound } from './identity-providers.service.js'
import { SAML_REQUEST_TTL_MS } from './saml-sp.js'
import { findSignInMember, findSsoRequest, rememberAssertion } from './sso.repository.js'
import { assertedEmail, startSignIn, verifyOidcAnswer, verifySamlResponse } from './sso.service.js'
import { checkTestReturnTo } from './sso-return.js'
import { completeSsoTest, findSsoTest, insertSsoTest, markSsoTestStarted } from './sso-test.repository.js'

/**
 * Test sign-ins (docs/sso.md §5): an administrator checks a provider — active or not yet —
 * before people depend on it. The provider's answer goes through every check a real sign-in makes, and
 * what it asserted (e-mail, NameID, attributes or claims, or why it was refused) is recorded for
 * `GET …/identity-providers/{id}/test/{testId}` and shown on the page the browser lands on. Nobody is
 * signed in, no token is issued, no account or membership is created.
 */

const WRITE = ['IDENTITY_PROVIDERS_UPDATE'] as const
/** How long a result can be read. */
const KEPT_MS = 24 * 3_600_000
/** Answer bodies are bounded: attributes past this size are left out of the report. */
const MAX_ATTRIBUTES_JSON = 64 * 1024

function testNotFound(): AppError {
  return new AppError(
    'sso_test_not_found',
    'No such test sign-in of this identity provider (or it has expired)',
  )
}

function toSsoTest(ctx: ServiceContext, row: SsoTestRow): SsoTest {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    providerId: row.provider_id,
    status: row.status,
    url: `${ctx.config.publicUrl}/v1/sso/${row.provider_id}/login?test=${row.id}`,
    email: row.email,
    nameId: row.name_id,
    attributes: row.attributes,
    error: row.error,
    memberFound: row.member_found,
    created: row.created.toISOString(),
    createdBy: row.created_by,
    started: row.started?.toISOString() ?? null,
    completed: row.completed?.toISOString() ?? null,
    expires: row.expires.toISOString(),
  }
}

/** `POST …/identity-providers/{id}/test`: a pending test and the URL that starts it. Audited. */
export async function startIdentityProviderTest(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  providerId: string,
): Promise<SsoTest> {
  const { tenant } = await requireTenantPermission(ctx, actor, tenantId, WRITE)
  const provider = await findTenantIdentityProvider(ctx.db, tenant.id, providerId.toLowerCase())
  if (!provider) throw identityProviderNotFound()
  const now = ctx.clock.now()
  const row: SsoTestRow = {
    tenant_id: tenant.id,
    provider_id: provider.id,
    id: newId(),
    status: 'pending',
    email: null,
    name_id: null,
    attributes: null,
    error: null,
    member_found: null,
    created: now,
    created_by: actor.principalId,
    started: null,
    completed: null,
    expires: new Date(now.getTime() + KEPT_MS),
  }
  await ctx.db.transaction().execute(async (tx) => {
    await insertSsoTest(tx, { ...row, attributes: null })
    await recordAudit(tx, ctx.clock, actor, {
      action: 'identity_provider.test_started',
      tenantId: tenant.id,
      target: { type: 'identityProvider', id: provider.id },
      changes: { test: [null, row.id] },
    })
  })
  return toSsoTest(ctx, row)
}

/** `GET …/identity-providers/{id}/test/{testId}`. */
export async function readIdentityProviderTest(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  providerId: string,
  testId: string,
): Promise<SsoTest> {
  const { tenant } = await requireTenantPermission(ctx, actor, tenantId, WRITE)
  const where = { tenantId: tenant.id, providerId: providerId.toLowerCase(), id: testId.toLowerCase() }
  const row = await findSsoTest(ctx.db, where, ctx.clock.now())
  if (!row) throw testNotFound()
  return toSsoTest(ctx, row)
}

/**
 * `GET /v1/sso/{providerId}/login?test=…`: the test's one browser round trip to the provider, started
 * within 10 minutes of the test. A provider that cannot be reached fails the test, in words. `returnTo`
 * (checked before the test is used up): where the browser goes once the answer is reported.
 */
export async function beginTestSignIn(
  ctx: ServiceContext,
  providerId: string,
  testId: string,
  returnTo?: string,
): Promise<{ url: string; provider: IdentityProviderRow }> {
  const provider = await findIdentityProvider(ctx.db, providerId)
  if (!provider) throw identityProviderNotFound()
  checkTestReturnTo(ctx, returnTo)
  const now = ctx.clock.now()
  const started = await markSsoTestStarted(
    ctx.db,
    { providerId: provider.id, id: testId.toLowerCase() },
    now,
    new Date(now.getTime() - SAML_REQUEST_TTL_MS),
  )
  if (!started) throw testNotFound()
  try {
    return { url: await startSignIn(ctx, provider.id, returnTo, { provider, testId: started.id }), provider }
  } catch (error) {
    await fail(ctx, started.id, error)
    throw error
  }
}

/** A test an answer belongs to, and where its browser goes after the report (null: the report page). */
export interface AnsweredTest {
  testId: string
  returnTo: string | null
}

async function testOfRequest(
  ctx: ServiceContext,
  providerId: string,
  requestId: string,
): Promise<AnsweredTest | undefined> {
  const request = await findSsoRequest(ctx.db, providerId, requestId, ctx.clock.now())
  return request?.test_id ? { testId: request.test_id, returnTo: request.return_to } : undefined
}

/** The test a SAML answer belongs to: the one whose request its InResponseTo names, if any. */
export async function samlTestOf(
  ctx: ServiceContext,
  providerId: string,
  samlResponse: string,
): Promise<AnsweredTest | undefined> {
  const xml = Buffer.from(samlResponse, 'base64').toString('utf8')
  const inResponseTo = /InResponseTo="([^"]{1,256})"/.exec(xml)?.[1]
  return inResponseTo ? testOfRequest(ctx, providerId, inResponseTo) : undefined
}

/** The test an OIDC redirect belongs to: the one its state was issued for, if any. */
export async function oidcTestOf(
  ctx: ServiceContext,
  providerId: string,
  state: string | undefined,
): Promise<AnsweredTest | undefined> {
  return state ? testOfRequest(ctx, providerId, state) : undefined
}

/** The ACS for a test: every check of a real sign-in (the assertion id used up too), then the report. */
export async function finishSamlTest(
  ctx: ServiceContext,
  providerId: string,
  testId: string,
  samlResponse: string,
): Promise<SsoTest> {
  const provider = await findIdentityProvider(ctx.db, providerId)
  if (provider?.protocol !== 'saml') throw identityProviderNotFound()
  try {
    const answer = await verifySamlResponse(ctx, provider, samlResponse)
    if (answer.testId !== testId) throw new Error('the answer belongs to another sign-in')
    const expires = new Date(ctx.clock.now().getTime() + KEPT_MS)
    if (!(await rememberAssertion(ctx.db, provider.id, answer.assertionId, expires)))
      throw new Error('this assertion was already used')
    const { profile } = answer
    const attributes = (profile.attributes ?? {}) as Record<string, unknown>
    const nameId = typeof profile.nameID === 'string' ? profile.nameID : null
    return await report(ctx, provider, testId, attributes, nameId, () =>
      assertedEmail(provider.email_mapping, profile, profile.nameID),
    )
  } catch (error) {
    return fail(ctx, testId, error)
  }
}

/** The OIDC callback for a test: the state, code exchange and ID token checked, then the report. */
export async function finishOidcTest(
  ctx: ServiceContext,
  providerId: string,
  testId: string,
  query: Record<string, string>,
  browserState: string | undefined,
): Promise<SsoTest> {
  const provider = await findIdentityProvider(ctx.db, providerId)
  if (provider?.protocol !== 'oidc') throw identityProviderNotFound()
  try {
    const { request, claims } = await verifyOidcAnswer(ctx, provider, query, browserState)
    if (request.test_id !== testId) throw new Error('the answer belongs to another sign-in')
    return await report(ctx, provider, testId, claims, null, () => {
      const email = assertedEmail(provider.email_mapping, claims)
      if (claims.email_verified === false) throw new Error(`the provider has not verified ${email}`)
      return email
    })
  } catch (error) {
    return fail(ctx, testId, error)
  }
}

/** What the provider asserted; the e-mail's refusal (none, unverified) fails the test but keeps the rest. */
async function report(
  ctx: ServiceContext,
  provider: IdentityProviderRow,
  testId: string,
  attributes: Record<string, unknown>,
  nameId: string | null,
  email: () => string,
): Promise<SsoTest> {
  const shown = JSON.stringify(attributes).length <= MAX_ATTRIBUTES_JSON ? attributes : {}
  const result: Updateable<SsoTestsTable> = {
    attributes: JSON.stringify(shown),
    name_id: nameId,
    completed: ctx.clock.now(),
  }
  try {
    const asserted = email()
    const member = await findSignInMember(ctx.db, provider.tenant_id, asserted)
    Object.assign(result, { status: 'succeeded', email: asserted, member_found: member !== undefined })
  } catch (error) {
    Object.assign(result, { status: 'failed', error: inWords(error) })
  }
  return complete(ctx, testId, result)
}

async function fail(ctx: ServiceContext, testId: string, error: unknown): Promise<SsoTest> {
  return complete(ctx, testId, { status: 'failed', error: inWords(error), completed: ctx.clock.now() })
}

async function complete(
  ctx: ServiceContext,
  testId: string,
  result: Parameters<typeof completeSsoTest>[2],
): Promise<SsoTest> {
  const row = await completeSsoTest(ctx.db, testId, result)
  if (!row) throw testNotFound()
  return toSsoTest(ctx, row)
}

function inWords(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.replace(/^Single sign-on refused: /, '').slice(0, 1_000)
}
