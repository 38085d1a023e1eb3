import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../src/access/permissions.js'
import { type DatabaseHandle, openDatabase } from '../../src/db/database.js'
import { isReusedWriteShape } from '../../src/outbox/write-unit.js'
import { createTenantAsAdmin, uniqueEmail, uniqueName } from '../helpers/fixtures.js'
import { createTestApp, type TestApp } from '../helpers/test-app.js'
import { createTestDatabase, onServerDatabase } from '../helpers/test-database.js'

/**
 * The create paths write their change and its audit event in one statement (outbox/write-unit.ts, with
 * audited-statement.ts' auditEventCtes). On a server database each such statement must keep one generic plan:
 * a statement PostgreSQL re-plans on every execution costs about half a millisecond of database CPU per
 * write (docs/performance.md). pg_prepared_statements counts the plans of the one connection's statements.
 */
/**
 * An app whose pool has one connection, so that pg_prepared_statements (a per-session view) shows every
 * statement the app prepared.
 */
async function onOneConnection(
  test: (t: TestApp, oneConnection: DatabaseHandle) => Promise<void>,
): Promise<void> {
  const database = await createTestDatabase()
  const oneConnection = await openDatabase({ url: database.url, dataDir: '', poolSize: 1 })
  const t = await createTestApp({ database: { ...database, handle: oneConnection } })
  try {
    await test(t, oneConnection)
  } finally {
    await t.close()
    await oneConnection.close()
    await database.drop()
  }
}

describe.skipIf(!onServerDatabase)('a change and its audit event in one statement', () => {
  it('is planned once: PostgreSQL runs its generic plan after the first executions', async () => {
    await onOneConnection(async (t, oneConnection) => {
      const admin = await t.adminToken()
      const parent = await createTenantAsAdmin(t)
      const runs = 12
      for (let i = 0; i < runs; i++) {
        const tenant = await t.request('POST', '/v1/tenants', {
          token: admin,
          body: { name: uniqueName(), regionId: parent.regionId, parentId: parent.id },
        })
        expect(tenant.status).toBe(201)
        const email = uniqueEmail('planned')
        const user = await t.request('POST', '/v1/users', {
          token: admin,
          body: { email, roleId: ROLE_IDS.platformUser },
        })
        expect(user.status).toBe(201)
        const invite = await t.request('POST', `/v1/tenants/${parent.id}/users`, {
          token: admin,
          body: { email, roleId: ROLE_IDS.agent, status: 'invited' },
        })
        expect(invite.status).toBe(201)
        const integration = await t.request('POST', `/v1/tenants/${parent.id}/integrations`, {
          token: admin,
          body: { type: 'rest', name: uniqueName(), active: false, properties: {} },
        })
        expect(integration.status).toBe(201)
      }

      const { rows } = await sql<{ statement: string; generic_plans: string; custom_plans: string }>`
        select statement, generic_plans, custom_plans from pg_prepared_statements
        where statement like '%audit_event as (%'`.execute(oneConnection.db)
      const tables = ['"tenants"', '"users"', '"integrations"', '"tenant_users"']
      for (const table of tables) {
        // No endpoint is active: every write ran the guarded form, without the fan-out.
        const statements = rows.filter((r) => r.statement.includes(`insert into ${table}`))
        expect(statements, `the statements inserting into ${table}`).toHaveLength(1)
        const statement = statements[0]
        expect(statement?.statement).toContain('tenantry_no_active_webhook()')
        expect(statement?.statement).not.toContain('webhook_delivery')
        // PostgreSQL tries five custom plans, then keeps the generic one unless it costs more.
        expect(Number(statement?.custom_plans), table).toBeLessThanOrEqual(5)
        expect(Number(statement?.generic_plans), table).toBeGreaterThanOrEqual(runs - 5)
      }

      // The creates' statement texts were built once and reused (the unit's check of its parameter
      // order against Kysely's passed for each), the invitation's among them.
      for (const kind of ['tenants', 'users', 'integrations', 'invitation']) {
        expect(isReusedWriteShape(kind), kind).toBe(true)
      }

      // And each change wrote exactly one event, with the target the statement itself resolved.
      const events = await sql<{ action: string; n: string; targets: string }>`
        select action, count(*) as n, count(distinct target_id) as targets from audit_events
        where action in ('tenant.created', 'user.created', 'membership.invited', 'integration.created')
        group by action`.execute(oneConnection.db)
      const counts = Object.fromEntries(events.rows.map((r) => [r.action, [Number(r.n), Number(r.targets)]]))
      expect(counts['tenant.created']).toEqual([runs + 1, runs + 1])
      expect(counts['user.created']?.[0]).toBeGreaterThanOrEqual(runs)
      expect(counts['membership.invited']).toEqual([runs, runs])
      expect(counts['integration.created']).toEqual([runs, runs])
    })
  })

  it('meets an active webhook endpoint: the guarded statement writes nothing, the fan-out form writes all', async () => {
    await onOneConnection(async (t, oneConnection) => {
      const admin = await t.adminToken()
      const parent = await createTenantAsAdmin(t)
      const hook = await t.request('POST', `/v1/tenants/${parent.id}/webhooks`, {
        token: admin,
        body: { url: 'https://hooks.example.com/in', events: ['*'], includeSubTenants: true },
      })
      expect(hook.status).toBe(201)
      const child = await t.request('POST', '/v1/tenants', {
        token: admin,
        body: { name: uniqueName(), regionId: parent.regionId, parentId: parent.id },
      })
      expect(child.status).toBe(201)
      const integration = await t.request('POST', `/v1/tenants/${parent.id}/integrations`, {
        token: admin,
        body: { type: 'rest', name: uniqueName(), active: false, properties: {} },
      })
      expect(integration.status).toBe(201)

      // Each change stored once, with its event and its delivery.
      const tenants = await sql<{
        n: string
      }>`select count(*) as n from tenants where name = ${child.body.result.name}`.execute(oneConnection.db)
      expect(Number(tenants.rows[0]?.n)).toBe(1)
      const queued = await oneConnection.db
        .selectFrom('outbox')
        .select('payload')
        .where('ordering_key', '=', hook.body.result.id)
        .orderBy('seq')
        .execute()
      expect(queued.map((q) => (q.payload as { action: string }).action)).toEqual([
        'webhook.created',
        'tenant.created',
        'integration.created',
      ])
      const { rows } = await sql<{ statement: string; executions: string }>`
        select statement, generic_plans + custom_plans as executions from pg_prepared_statements
        where statement like '%insert into "tenants"%audit_event as (%'`.execute(oneConnection.db)
      const fanOut = rows.find((r) => r.statement.includes('webhook_delivery'))
      expect(fanOut, 'the fan-out form ran').toBeDefined()
    })
  })
})
