import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../../src/access/permissions.js'
import { openInvitationMail } from '../../../../src/outbox/mail/invitation-mail.js'
import { openPasswordResetMail } from '../../../../src/outbox/mail/password-reset-mail.js'
import { closeAfterBulk } from '../../../helpers/bulk.js'
import { createTenantAsAdmin, uniqueEmail, uniqueName } from '../../../helpers/fixtures.js'
import { createTestIdp, type TestIdp } from '../../../helpers/saml-idp.js'
import { type ApiResponse, type TestApp, useTestApp } from '../../../helpers/test-app.js'

/**
 * The machinery of the audit-rollback tests (docs/webhooks.md; the idea: ../audit-rollback.test.ts): a file's
 * app with the trigger function the faults use, the helpers a scene arranges its write with, and
 * `describeRollback`, which puts every scene of a table through both faults.
 */
/** What a write answered: its status and, for a JSON error, the reason. */
export interface Outcome {
  status: number
  reason?: string
}

function outcome(response: ApiResponse): Outcome {
  const reason = typeof response.body === 'object' ? response.body?.error?.reason : undefined
  return reason === undefined ? { status: response.status } : { status: response.status, reason }
}

/** A write under test, arranged, and how to read back what it changed. */
export interface Scene {
  /** Sends the write; it may be sent again once the fault is gone. */
  write(): Promise<Outcome>
  /** Whether the write's change is stored, read back through the API. */
  stored(): Promise<boolean>
}

export interface WriteAction {
  /** The request, and what it does. */
  name: string
  /** The audit action the event-side fault refuses (its first event, when a write records several). */
  action: string
  /** The change's own table, which the change-side fault refuses. */
  table: string
  arrange(): Promise<Scene>
}

export const PASSWORD = 'a long enough password'

/** A request's options with the given token. */
export const as = (token: string) => ({ token })

export type Rollback = ReturnType<typeof rollbackScene>

/** A test file's app for the rollback scenes, and the helpers the scenes use (they read `admin` late). */
export function rollbackScene() {
  const t = useTestApp()
  let admin = ''
  let idp: TestIdp | undefined

  beforeAll(async () => {
    admin = await t.adminToken()
    idp = createTestIdp()
    await sql
      .raw(
        `create function test_refuse() returns trigger language plpgsql as $$
         begin raise exception 'refused by the test on %', tg_table_name; end $$`,
      )
      .execute(t.ctx.db)
  })
  afterAll(() => closeAfterBulk(t))

  const api = async (method: string, url: string, options: Parameters<TestApp['request']>[2] = {}) =>
    outcome(await t.request(method, url, options))
  const get = (url: string) => t.request('GET', url, as(admin))

  async function newTenant() {
    return (await createTenantAsAdmin(t)).id
  }

  /** A platform user made through the API (no password), and its id. */
  async function newUser(): Promise<{ id: string; email: string }> {
    const email = uniqueEmail('rb')
    const response = await t.request('POST', '/v1/users', {
      token: admin,
      body: { email, roleId: ROLE_IDS.platformUser },
    })
    expect(response.status).toBe(201)
    return { id: response.body.result.id, email }
  }

  async function userExists(email: string): Promise<boolean> {
    return (await get(`/v1/users?email=${encodeURIComponent(email)}`)).status === 200
  }

  async function membership(tenantId: string, userId: string) {
    const response = await get(`/v1/tenants/${tenantId}/users/${userId}`)
    return response.status === 200 ? response.body.result : undefined
  }

  /** Invites a user (status invited) and returns the token its e-mail carries. */
  async function invite(tenantId: string, email: string): Promise<string> {
    const invited = await t.request('POST', `/v1/tenants/${tenantId}/users`, {
      token: admin,
      body: { email, roleId: ROLE_IDS.agent, status: 'invited' },
    })
    expect(invited.status).toBe(201)
    const [mail] = await t.ctx.db
      .selectFrom('outbox')
      .select(['id', 'payload'])
      .where('kind', '=', 'invitation_email')
      .where(sql<boolean>`payload->>'to' = ${email}`)
      .execute()
    return openInvitationMail(t.ctx.keys, mail!.id, mail!.payload as Record<string, unknown>).token
  }

  /** Has an administrator send a reset link to the user and returns its token. */
  async function resetToken(userId: string): Promise<string> {
    const response = await t.request('PUT', `/v1/users/${userId}`, {
      token: admin,
      body: { resetPassword: true },
    })
    expect(response.status).toBe(200)
    const [mail] = await t.ctx.db
      .selectFrom('outbox')
      .select(['id', 'payload'])
      .where('kind', '=', 'password_reset_email')
      .where(sql<boolean>`payload->>'userId' = ${userId}`)
      .execute()
    return openPasswordResetMail(t.ctx.keys, mail!.id, mail!.payload as Record<string, unknown>).token
  }

  const form = (fields: Record<string, string>) => ({
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  })

  async function tenantFieldIs(tenantId: string, field: string, value: unknown) {
    return (await get(`/v1/tenants/${tenantId}`)).body.result[field] === value
  }

  /** An integration made through the API in `tenantId`. */
  async function newIntegration(tenantId: string): Promise<string> {
    const response = await t.request('POST', `/v1/tenants/${tenantId}/integrations`, {
      token: admin,
      body: {
        type: 'rest',
        name: uniqueName('CRM'),
        properties: { endpointPrefix: 'https://crm.example.com' },
      },
    })
    expect(response.status).toBe(201)
    return response.body.result.id
  }

  async function newSamlProvider(tenantId: string): Promise<string> {
    const created = await t.request('POST', `/v1/tenants/${tenantId}/identity-providers`, {
      token: admin,
      body: { name: uniqueName('IdP'), identityProvider: 'saml', metadataFile: idp!.metadata },
    })
    expect(created.status).toBe(201)
    return created.body.result.id
  }

  async function countEvents(action?: string): Promise<number> {
    let query = t.ctx.db.selectFrom('audit_events').select((eb) => eb.fn.countAll<string>().as('n'))
    if (action !== undefined) query = query.where('action', '=', action)
    return Number((await query.executeTakeFirstOrThrow()).n)
  }

  /** Runs `fn` with a trigger installed that refuses rows, and always removes it. */
  async function withRefusal<T>(trigger: string, table: string, fn: () => Promise<T>): Promise<T> {
    await sql.raw(trigger).execute(t.ctx.db)
    try {
      return await fn()
    } finally {
      await sql.raw(`drop trigger if exists test_refuse_row on ${table}`).execute(t.ctx.db)
    }
  }

  return {
    t,
    get admin() {
      return admin
    },
    get idp(): TestIdp {
      if (!idp) throw new Error('the IdP exists from beforeAll on')
      return idp
    },
    api,
    get,
    newTenant,
    newUser,
    userExists,
    membership,
    invite,
    resetToken,
    form,
    tenantFieldIs,
    newIntegration,
    newSamlProvider,
    countEvents,
    withRefusal,
  }
}

const INTERNAL = { status: 500 }

function expectRefused(result: Outcome) {
  expect(result).toMatchObject(INTERNAL)
  if (result.reason !== undefined) expect(result.reason).toBe('internal')
}

/** Puts every scene of `actions` through both faults (a test each). */
export function describeRollback(r: Rollback, actions: WriteAction[]): void {
  const { countEvents, withRefusal } = r
  describe.each(actions)('$name', ({ action, table, arrange }) => {
    it(`an event that cannot be written (${action}) takes the change with it; without the fault both are stored`, async () => {
      const scene = await arrange()
      const refused = await withRefusal(
        `create trigger test_refuse_row before insert on audit_events
         for each row when (new.action = '${action}') execute function test_refuse()`,
        'audit_events',
        () => scene.write(),
      )
      expectRefused(refused)
      expect(await scene.stored()).toBe(false)

      // The same write without the fault: stored, with its event.
      const before = await countEvents(action)
      const written = await scene.write()
      expect(written.status).toBeGreaterThanOrEqual(200)
      expect(written.status).toBeLessThan(400)
      expect(await countEvents(action)).toBeGreaterThan(before)
      expect(await scene.stored()).toBe(true)
    })

    it(`a change that cannot be written (${table}) leaves no event`, async () => {
      const scene = await arrange()
      const before = await countEvents()
      const refused = await withRefusal(
        `create trigger test_refuse_row after insert or update or delete on ${table}
         for each row execute function test_refuse()`,
        table,
        () => scene.write(),
      )
      expectRefused(refused)
      expect(await countEvents()).toBe(before)
      expect(await scene.stored()).toBe(false)
    })
  })
}
