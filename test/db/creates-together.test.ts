import { sql } from 'kysely'
import { beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../src/access/permissions.js'
import { newId } from '../../src/crypto/uuid7.js'
import { tenantInsert } from '../../src/modules/tenants/tenants.repository.js'
import { auditEvent } from '../../src/outbox/audit-event.js'
import { isReusedWriteShape, writeUnit } from '../../src/outbox/write-unit.js'
import { batchFigures, createsInOneBurst, tableLock, whileLocked } from '../helpers/batching.js'
import { freshTenant, REGION_ID, uniqueEmail, uniqueName } from '../helpers/fixtures.js'
import { useTestApp } from '../helpers/test-app.js'

/**
 * Creates that arrive together are written together (outbox/write-unit.ts): one
 * statement holds several new rows, each with its own audit event (and webhook deliveries), yet each
 * request is answered with its own record, and a refused one refuses only itself.
 */
const t = useTestApp()
let parent: { id: string; name: string }
/** The parent tenant's own Administrator: creates come from a tenant administrator, as in the bench. */
let token: string
let adminId: string
let platformToken: string

beforeAll(async () => {
  platformToken = await t.adminToken()
})
beforeEach(async () => {
  const fresh = await freshTenant(t)
  parent = fresh.tenant
  token = fresh.admin.token
  adminId = fresh.admin.id
})

function createTenant(body: Record<string, unknown> = {}) {
  return t.request('POST', '/v1/tenants', {
    token,
    body: { name: uniqueName(), regionId: REGION_ID, parentId: parent.id, ...body },
  })
}

function createIntegration(body: Record<string, unknown> = {}) {
  return t.request('POST', `/v1/tenants/${parent.id}/integrations`, {
    token,
    body: { type: 'rest', name: uniqueName('Integration'), active: false, properties: {}, ...body },
  })
}

function createUser(body: Record<string, unknown> = {}) {
  return t.request('POST', '/v1/users', {
    token: platformToken,
    body: { email: uniqueEmail(), roleId: ROLE_IDS.platformUser, ...body },
  })
}

/** Events of `action` by target id: how many each target has. */
async function eventsOf(action: string, targetIds: readonly string[]): Promise<Map<string, number>> {
  const rows = await t.database.handle.db
    .selectFrom('audit_events')
    .select('target_id')
    .where('action', '=', action)
    .where('target_id', 'in', targetIds)
    .execute()
  const counts = new Map<string, number>()
  for (const { target_id } of rows)
    counts.set(target_id as string, (counts.get(target_id as string) ?? 0) + 1)
  return counts
}

const once = (ids: readonly string[]) => new Map(ids.map((id) => [id, 1]))

describe('creates written together', () => {
  it('writes concurrent tenant creates in fewer statements, each answered with its own tenant and event', async () => {
    const names = Array.from({ length: 30 }, () => uniqueName())
    const { responses, statements, writes } = await createsInOneBurst(t, 'tenants', () =>
      Promise.all(names.map((name) => createTenant({ name }))),
    )
    expect(responses.map((r) => r.status)).toEqual(names.map(() => 201))
    expect(responses.map((r) => r.body.result.name)).toEqual(names)
    expect(responses.every((r) => r.body.result.parentId === parent.id)).toBe(true)
    // All 30 went through the batcher, some of them sharing a statement, and none ran twice.
    expect(writes).toBe(30)
    expect(statements).toBeLessThan(30)
    // A statement of several copies is built once per shape and size and then reused, like a single one:
    // its parameter list matched Kysely's (db/statement-texts.ts).
    expect(isReusedWriteShape('tenants', 'several')).toBe(true)
    // Each stored as answered, with exactly one event of its own.
    const ids = responses.map((r) => r.body.result.id as string)
    for (const [i, id] of ids.entries()) {
      const read = await t.request('GET', `/v1/tenants/${id}`, { token })
      expect(read.body.result.name).toBe(names[i])
    }
    expect(await eventsOf('tenant.created', ids)).toEqual(once(ids))
    const read = await t.request('GET', `/v1/tenants/${parent.id}`, { token })
    expect([...read.body.result.childIds].sort()).toEqual([...ids].sort())
  })

  it('refuses only the failing creates of a batch: a taken name, an unknown region, an unknown administrator', async () => {
    const taken = (await createTenant()).body.result.name as string
    const bodies: Record<string, unknown>[] = Array.from({ length: 12 }, () => ({ name: uniqueName() }))
    bodies[3] = { name: taken }
    bodies[6] = { name: uniqueName(), regionId: '00000000-0000-4000-8000-000000000000' }
    bodies[9] = { name: uniqueName(), adminUserId: '00000000-0000-4000-8000-000000000001' }
    const { responses, writes } = await createsInOneBurst(t, 'tenants', () =>
      Promise.all(bodies.map((body) => createTenant(body))),
    )
    expect(responses[3]?.status).toBe(409)
    expect(responses[3]?.body.error).toMatchObject({
      reason: 'tenant_name_taken',
      attribute: { name: 'already exists' },
    })
    expect(responses[6]?.status).toBe(400)
    expect(responses[6]?.body.error.attribute).toEqual({ regionId: 'does not exist' })
    expect(responses[9]?.status).toBe(400)
    expect(responses[9]?.body.error.attribute).toEqual({ adminUserId: 'does not exist' })
    const created = responses.filter((_, i) => ![3, 6, 9].includes(i))
    expect(created.map((r) => r.status)).toEqual(created.map(() => 201))
    // The refused wrote nothing; the others each one tenant and one event. A refused write failed the
    // batch it was in, whose writes then ran again alone.
    const children = (await t.request('GET', `/v1/tenants/${parent.id}`, { token })).body.result.childIds
    expect(children).toHaveLength(10)
    const ids = created.map((r) => r.body.result.id as string)
    expect(await eventsOf('tenant.created', ids)).toEqual(once(ids))
    expect(writes).toBeGreaterThan(bodies.length)
  })

  it('queues every batched create its own webhook delivery while an endpoint is active', async () => {
    const hook = await t.request('POST', `/v1/tenants/${parent.id}/webhooks`, {
      token,
      body: { url: 'https://hooks.example.com/in', events: ['tenant.created'], includeSubTenants: true },
    })
    expect(hook.status).toBe(201)
    const { responses, statements, writes } = await createsInOneBurst(t, 'tenants', () =>
      Promise.all(Array.from({ length: 20 }, () => createTenant())),
    )
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 201))
    expect(writes).toBe(20)
    expect(statements).toBeLessThan(20)
    const events = await t.database.handle.db
      .selectFrom('audit_events')
      .select(['id', 'target_id'])
      .where('action', '=', 'tenant.created')
      .where(
        'target_id',
        'in',
        responses.map((r) => r.body.result.id as string),
      )
      .execute()
    expect(events).toHaveLength(20)
    const deliveries = await t.database.handle.db
      .selectFrom('outbox')
      .select(sql<string>`payload->>'eventId'`.as('eventId'))
      .where('ordering_key', '=', hook.body.result.id)
      .execute()
    expect(deliveries.map((d) => d.eventId).sort()).toEqual(events.map((e) => e.id).sort())
    await t.request('PUT', `/v1/tenants/${parent.id}/webhooks/${hook.body.result.id}`, {
      token,
      body: { active: false },
    })
  })

  it('writes concurrent user creates together, each with its own alias and event', async () => {
    // The caller's permissions and the role catalogue are read once beforehand, as under load.
    expect((await createUser()).status).toBe(201)
    const emails = Array.from({ length: 16 }, () => uniqueEmail())
    const { responses, statements, writes } = await createsInOneBurst(t, 'users', () =>
      Promise.all(emails.map((email) => createUser({ email }))),
    )
    expect(responses.map((r) => r.status)).toEqual(emails.map(() => 201))
    expect(responses.map((r) => r.body.result.email)).toEqual(emails)
    expect(new Set(responses.map((r) => r.body.result.aliasPlatformUserId)).size).toBe(16)
    expect(writes).toBe(16)
    expect(statements).toBeLessThan(16)
    const ids = responses.map((r) => r.body.result.id as string)
    expect(await eventsOf('user.created', ids)).toEqual(once(ids))
  })

  it('refuses a taken e-mail alone among concurrent user creates', async () => {
    const taken = (await createUser()).body.result.email as string
    const emails = Array.from({ length: 16 }, () => uniqueEmail())
    emails[7] = taken
    const responses = await whileLocked(t, tableLock('users'), () =>
      Promise.all(emails.map((email) => createUser({ email }))),
    )
    expect(responses[7]?.status).toBe(409)
    expect(responses[7]?.body.error.reason).toBe('email_taken')
    const created = responses.filter((_, i) => i !== 7)
    expect(created.map((r) => r.status)).toEqual(created.map(() => 201))
    expect(created.map((r) => r.body.result.email)).toEqual(emails.filter((_, i) => i !== 7))
    const ids = created.map((r) => r.body.result.id as string)
    expect(await eventsOf('user.created', ids)).toEqual(once(ids))
  })

  it('never puts two integrations of one name in a statement: one is created, the other refused, no batch fails', async () => {
    const name = uniqueName('Integration')
    const {
      responses: [fillers, twins],
      statements,
      writes,
    } = await createsInOneBurst(t, 'integrations', async () => {
      // Eight others first: they take the running statements and the rest queue, and the twins queue behind
      // them. Were the twins in one statement, it would fail and its writes run again alone.
      const filling = Promise.all(Array.from({ length: 8 }, () => createIntegration()))
      await new Promise((resolve) => setTimeout(resolve, 100))
      const both = Promise.all([createIntegration({ name }), createIntegration({ name })])
      return Promise.all([filling, both])
    })
    expect(fillers.map((r) => r.status)).toEqual(fillers.map(() => 201))
    expect(twins.map((r) => r.status).sort()).toEqual([201, 409])
    expect(twins.find((r) => r.status === 409)?.body.error.reason).toBe('integration_name_taken')
    expect(writes).toBe(10)
    expect(statements).toBeLessThan(10)
  })

  it('writes a create inside a transaction without the batcher (the bootstrap and import paths)', async () => {
    // A create on a transaction's executor runs at once on that transaction: rolled back with it.
    const before = await batchFigures('tenants')
    const name = uniqueName()
    await t.database.handle.db
      .transaction()
      .execute(async (tx) => {
        const id = newId()
        const now = t.clock.now()
        await writeUnit({ ...t.ctx, db: tx }).insert(
          tenantInsert(
            {
              id,
              name,
              name_key: name.toLowerCase(),
              description: '',
              region_id: REGION_ID,
              parent_id: parent.id,
              parent_ids: [parent.id],
              admin_user_id: adminId,
              active: true,
              timezone: 'UTC',
              cxengage_identity_provider: 'enabled',
              created: now,
              created_by: adminId,
              updated: now,
              updated_by: adminId,
            },
            auditEvent(
              t.clock,
              { kind: 'system' },
              {
                action: 'tenant.created',
                tenantId: id,
                target: { type: 'tenant', id },
              },
            ),
          ),
        )
        throw new Error('roll back')
      })
      .catch((error: Error) => expect(error.message).toBe('roll back'))
    expect(await batchFigures('tenants')).toEqual(before)
    const { rows } = await sql`select 1 from tenants where name = ${name}`.execute(t.database.handle.db)
    expect(rows).toHaveLength(0)
  })
})
