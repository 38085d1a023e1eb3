import { TOTP } from 'otpauth'
import { REGIONS, ROLE_IDS } from '../../src/access/permissions.js'
import { INVITATION_EMAIL } from '../../src/outbox/outbox.repository.js'
import type { RequestFactory, RequestStep } from './load.js'
import { BENCH_EMAIL_DOMAIN, inviteeEmail, loginEmail, mfaLoginEmail } from './seed.js'

export type CeilingId = 'bare' | 'insert' | 'select' | 'invitation'

/** A budget, as ratios to the scenario's ceiling measured in the same run (issue 7). */
export interface Budget {
  /** The scenario's median req/s over the ceiling's must be at least this. */
  minRatio: number
  /** When set: the scenario's median p99 must be at most this many times the ceiling's. */
  maxP99Factor?: number
}

export interface Workload {
  id: string
  label: string
  target: 'server' | 'ceiling'
  next: RequestFactory
  /** An operation of several requests (its rate counts operations); `next` is then its first request. */
  steps?: RequestStep[]
  /**
   * The outbox kind of the mail each request queues: the report says how much of a window's mail was
   * sent by the window's end — delivery that falls behind is work left out of the window's figures.
   */
  mailKind?: string
}

export interface Scenario extends Workload {
  target: 'server'
  ceiling: CeilingId
  budget?: Budget
  /** Said in the report when it has no budget. */
  note?: string
  /**
   * A ceiling doing this scenario's own required work with none of Tenantry's code (PostgreSQL only),
   * reported beside the budget: how much of the gap to `ceiling` is Tenantry's, and how much the work's.
   */
  reference?: CeilingId
  /**
   * Another scenario this one is held to, round by round (its req/s over the other's): the sign-in with a
   * second factor against the password-only one.
   */
  compareWith?: { scenario: string; minRatio: number }
}

/** What the arrangement produced: who calls, and where. */
export interface Arrangement {
  /** A token of a user who is an accepted Administrator of `tenantId` and nothing else. */
  token: string
  /** The bench tenant: invitations and integrations go here; GET reads it. */
  tenantId: string
  /** A sub-tenant of it: the parent of every tenant the create scenario makes. */
  parentId: string
  /** A row of the ceiling's table, for the select ceiling. */
  ceilingRowId: string
  /** A SCIM bearer token of the bench tenant, and the userName of a user it provisioned. */
  scimToken: string
  scimUserName: string
}

const REGION_ID = REGIONS[0]!.id

/** Counts what a pool handed out, and whether it ran dry (then it wraps, and the report says so). */
export class Pool {
  #next = 0
  exhausted = false
  constructor(readonly size: number) {}
  take(): number {
    if (this.#next >= this.size) this.exhausted = true
    return this.#next++ % this.size
  }
  get used(): number {
    return this.#next
  }
}

export function ceilingWorkloads(
  arrangement: Arrangement,
  pools: ScenarioPools,
): Record<CeilingId, Workload> {
  let n = 0
  return {
    bare: {
      id: 'ceiling-bare',
      label: 'ceiling: GET constant JSON',
      target: 'ceiling',
      next: () => ({ method: 'GET', path: '/bare' }),
    },
    insert: {
      id: 'ceiling-insert',
      label: 'ceiling: 1 INSERT … RETURNING',
      target: 'ceiling',
      next: () => {
        n += 1
        return {
          method: 'POST',
          path: '/insert',
          body: { name: `Ceiling tenant ${n}`, description: 'A row the size of a tenant' },
        }
      },
    },
    select: {
      id: 'ceiling-select',
      label: 'ceiling: 1 SELECT by key',
      target: 'ceiling',
      next: () => ({ method: 'GET', path: `/select/${arrangement.ceilingRowId}` }),
    },
    invitation: {
      id: 'ceiling-invitation',
      label: "ceiling: an invitation's writes and mail",
      target: 'ceiling',
      mailKind: INVITATION_EMAIL,
      // Invitees from the invite scenario's pool: each seeded user is invited once, by one or the other.
      next: () => ({
        method: 'POST',
        path: '/invitation',
        body: { email: inviteeEmail(pools.invitees.take()), tenantId: arrangement.tenantId },
      }),
    },
  }
}

export interface ScenarioPools {
  invitees: Pool
  logins: Pool
  /** Users with an authenticator app (seed.ts): each signs in once, so its code is fresh and unused. */
  mfaLogins: Pool
}

/** The operations under test, each as a tenant Administrator would call it (tokens: anonymous). */
export function tenantryScenarios(
  arrangement: Arrangement,
  pools: ScenarioPools,
  loginPassword: string,
  totpSecret: string,
): Scenario[] {
  const auth = { authorization: `Bearer ${arrangement.token}` }
  const counter = () => {
    let n = 0
    return () => ++n
  }
  const tenantN = counter()
  const userN = counter()
  const integrationN = counter()
  const scimN = counter()
  const scim = { authorization: `Bearer ${arrangement.scimToken}` }
  const scimBase = `/scim/v2/tenants/${arrangement.tenantId}`
  return [
    {
      id: 'create-tenant',
      label: 'POST /v1/tenants',
      target: 'server',
      ceiling: 'insert',
      budget: { minRatio: 0.7, maxP99Factor: 2 },
      next: () => ({
        method: 'POST',
        path: '/v1/tenants',
        headers: auth,
        body: {
          name: `Bench tenant ${tenantN()}`,
          regionId: REGION_ID,
          parentId: arrangement.parentId,
          description: 'A sub-tenant created by the benchmark',
        },
      }),
    },
    {
      id: 'create-user',
      label: 'POST /v1/users',
      target: 'server',
      ceiling: 'insert',
      budget: { minRatio: 0.7, maxP99Factor: 2 },
      next: () => {
        const n = userN()
        return {
          method: 'POST',
          path: '/v1/users',
          headers: auth,
          body: {
            email: `user-${n}@${BENCH_EMAIL_DOMAIN}`,
            roleId: ROLE_IDS.platformUser,
            firstName: 'Bench',
            lastName: `User ${n}`,
          },
        }
      },
    },
    {
      id: 'invite-user',
      label: 'POST /v1/tenants/{t}/users (invited)',
      target: 'server',
      ceiling: 'insert',
      budget: { minRatio: 0.5 },
      reference: 'invitation',
      mailKind: INVITATION_EMAIL,
      next: () => ({
        method: 'POST',
        path: `/v1/tenants/${arrangement.tenantId}/users`,
        headers: auth,
        body: { email: inviteeEmail(pools.invitees.take()), roleId: ROLE_IDS.agent, status: 'invited' },
      }),
    },
    {
      id: 'create-integration',
      label: 'POST /v1/tenants/{t}/integrations',
      target: 'server',
      ceiling: 'insert',
      budget: { minRatio: 0.5 },
      next: () => ({
        method: 'POST',
        path: `/v1/tenants/${arrangement.tenantId}/integrations`,
        headers: auth,
        body: {
          type: 'rest',
          name: `Bench integration ${integrationN()}`,
          description: 'Created by the benchmark',
          active: true,
          properties: {
            endpointPrefix: `https://crm.${BENCH_EMAIL_DOMAIN}/api`,
            username: 'bench',
            password: 'bench-integration-password',
            token: 'bench-integration-token',
          },
        },
      }),
    },
    {
      id: 'get-tenant',
      label: 'GET /v1/tenants/{t}',
      target: 'server',
      ceiling: 'select',
      budget: { minRatio: 0.6 },
      next: () => ({ method: 'GET', path: `/v1/tenants/${arrangement.tenantId}`, headers: auth }),
    },
    {
      id: 'scim-create-user',
      label: 'POST /scim/v2/tenants/{t}/Users',
      target: 'server',
      ceiling: 'insert',
      budget: { minRatio: 0.5 },
      // A new person each request: a platform user, an accepted membership and its SCIM row.
      next: () => {
        const n = scimN()
        return {
          method: 'POST',
          path: `${scimBase}/Users`,
          headers: scim,
          body: {
            schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
            userName: `scim-${n}@${BENCH_EMAIL_DOMAIN}`,
            name: { givenName: 'Scim', familyName: `User ${n}` },
            emails: [{ value: `scim-${n}@${BENCH_EMAIL_DOMAIN}`, type: 'work', primary: true }],
            externalId: `ext-${n}`,
            active: true,
          },
        }
      },
    },
    {
      id: 'scim-find-user',
      label: 'GET /scim/v2/tenants/{t}/Users?filter=userName eq',
      target: 'server',
      ceiling: 'select',
      budget: { minRatio: 0.6 },
      next: () => ({
        method: 'GET',
        path: `${scimBase}/Users?filter=${encodeURIComponent(`userName eq "${arrangement.scimUserName}"`)}`,
        headers: scim,
      }),
    },
    {
      id: 'issue-token',
      label: 'POST /v1/tokens',
      target: 'server',
      ceiling: 'bare',
      note: 'argon2id bound (a fresh user each request): reported, no budget',
      next: () => ({
        method: 'POST',
        path: '/v1/tokens',
        body: { username: loginEmail(pools.logins.take()), password: loginPassword },
      }),
    },
    tokenWithSecondFactor(pools, loginPassword, totpSecret),
  ]
}

/**
 * A sign-in with an authenticator app (docs/security.md): the password (401 mfa_required and its
 * challenge), then the app's current code at POST /v1/tokens/mfa. A code is taken once per account and
 * step, so every sign-in is of an account not used yet (they share one key, seed.ts).
 */
function tokenWithSecondFactor(pools: ScenarioPools, password: string, secret: string): Scenario {
  const totp = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret })
  const passwordStep = () => ({
    method: 'POST' as const,
    path: '/v1/tokens',
    body: { username: mfaLoginEmail(pools.mfaLogins.take()), password },
  })
  const steps: RequestStep[] = [
    {
      build: passwordStep,
      expect: 401,
      read: (body, context) => {
        context.mfaToken = (JSON.parse(body) as { error?: { mfa?: { token?: string } } }).error?.mfa?.token
      },
    },
    {
      build: (context) => ({
        method: 'POST',
        path: '/v1/tokens/mfa',
        body: { mfaToken: context.mfaToken ?? 'no-challenge-was-answered', code: totp.generate() },
      }),
      expect: 200,
    },
  ]
  return {
    id: 'token-mfa',
    label: 'POST /v1/tokens + /v1/tokens/mfa',
    target: 'server',
    ceiling: 'bare',
    note: 'sign-ins a second (two requests each): a password, then an authenticator app’s code',
    compareWith: { scenario: 'issue-token', minRatio: 0.9 },
    next: passwordStep,
    steps,
  }
}
