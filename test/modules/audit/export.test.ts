import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { recordAudit } from '../../../src/modules/audit/audit.repository.js'
import { CSV_PAGE, csvCell } from '../../../src/modules/audit/audit-csv.js'
import { freshTenant, memberWithToken } from '../../helpers/fixtures.js'
import { createTestApp, type TestApp } from '../../helpers/test-app.js'

/**
 * The audit trail's CSV export (docs/webhooks.md#csv-export): exactly the events the filters select — the same as the
 * JSON list, past one page of reading —, secrets only as "********", another tenant's events never,
 * and formula cells defused.
 */
let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(async () => t.close())

/** The CSV's rows as objects (no cell here holds a line break). */
function parse(csv: string): Record<string, string>[] {
  const [head, ...rows] = csv.trimEnd().split('\r\n')
  const columns = (head ?? '').split(',')
  return rows.map((row) => {
    const cells: string[] = []
    let rest = row
    while (rest.length > 0 || cells.length < columns.length) {
      if (rest.startsWith('"')) {
        let j = 1
        let cell = ''
        for (; j < rest.length; j++) {
          if (rest[j] === '"' && rest[j + 1] === '"') {
            cell += '"'
            j++
          } else if (rest[j] === '"') break
          else cell += rest[j]
        }
        cells.push(cell)
        rest = rest.slice(j + 2)
      } else {
        const comma = rest.indexOf(',')
        cells.push(comma === -1 ? rest : rest.slice(0, comma))
        rest = comma === -1 ? '' : rest.slice(comma + 1)
      }
      if (cells.length >= columns.length) break
    }
    return Object.fromEntries(columns.map((c, i) => [c, cells[i] ?? '']))
  })
}

describe('GET …/audit-events?format=csv', () => {
  it('holds exactly the filtered events, as the JSON list does, read past one page, secrets masked', async () => {
    const { tenant, admin } = await freshTenant(t)
    const other = await freshTenant(t)
    const many = CSV_PAGE + 137
    await t.ctx.db.transaction().execute(async (tx) => {
      await recordAudit(
        tx,
        t.ctx.clock,
        { kind: 'system' },
        Array.from({ length: many }, (_, n) => ({
          action: 'export.checked',
          tenantId: n % 5 === 0 ? other.tenant.id : tenant.id,
          target: { type: 'tenant', id: tenant.id },
          changes: { step: [null, n] },
        })),
      )
    })
    const mine = many - Math.ceil(many / 5)
    const response = await t.request(
      'GET',
      `/v1/tenants/${tenant.id}/audit-events?format=csv&action=export.checked`,
      {
        token: admin.token,
      },
    )
    expect(response.status).toBe(200)
    expect(String(response.headers['content-type'])).toBe('text/csv; charset=utf-8')
    expect(String(response.headers['content-disposition'])).toContain('attachment')
    const rows = parse(response.body)
    expect(rows).toHaveLength(mine)
    expect(rows.every((row) => row.tenantId === tenant.id && row.action === 'export.checked')).toBe(true)
    const list = await t.request(
      'GET',
      `/v1/tenants/${tenant.id}/audit-events?action=export.checked&limit=1000`,
      { token: admin.token },
    )
    expect(rows.map((row) => row.id)).toEqual(list.body.result.map((e: { id: string }) => e.id))
    expect(JSON.parse(rows[0]?.changes ?? '{}')).toEqual(list.body.result[0].changes)

    // Accept: text/csv asks for the same; the platform export holds the other tenant's too.
    const accepted = await t.request('GET', `/v1/tenants/${tenant.id}/audit-events?action=export.checked`, {
      token: admin.token,
      headers: { accept: 'text/csv' },
    })
    expect(parse(accepted.body)).toHaveLength(mine)
    const platform = await t.request('GET', '/v1/audit-events?format=csv&action=export.checked', {
      token: await t.adminToken(),
    })
    expect(parse(platform.body).length).toBeGreaterThanOrEqual(many)
  })

  it('shows secrets only as ******** and filters by actor, target and time', async () => {
    const { tenant, admin } = await freshTenant(t)
    const created = await t.request('POST', `/v1/tenants/${tenant.id}/integrations`, {
      token: admin.token,
      body: { type: 'rest', name: 'CSV CRM', active: false, properties: { password: 'hunter2-very-secret' } },
    })
    expect(created.status).toBe(201)
    const since = new Date(t.clock.now().getTime() - 1).toISOString()
    await t.request('PUT', `/v1/tenants/${tenant.id}`, {
      token: admin.token,
      body: { description: 'a, "quoted"\tvalue' },
    })
    const csv = (
      await t.request('GET', `/v1/tenants/${tenant.id}/audit-events?format=csv`, { token: admin.token })
    ).body as string
    expect(csv).not.toContain('hunter2-very-secret')
    const integration = parse(csv).find((row) => row.action === 'integration.created')
    expect(integration?.changes).toContain('********')

    const byActor = parse(
      (
        await t.request(
          'GET',
          `/v1/tenants/${tenant.id}/audit-events?format=csv&actorId=${admin.id}&targetId=${tenant.id}&since=${encodeURIComponent(since)}`,
          { token: admin.token },
        )
      ).body,
    )
    expect(byActor.map((row) => row.action)).toEqual(['tenant.updated'])
    expect(JSON.parse(byActor[0]?.changes ?? '{}').description[1]).toBe('a, "quoted"\tvalue')
  })

  it('refuses a caller without VIEW_AUDIT_LOG, and another tenant’s export', async () => {
    const { tenant } = await freshTenant(t)
    const other = await freshTenant(t)
    const agent = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    expect(
      (await t.request('GET', `/v1/tenants/${tenant.id}/audit-events?format=csv`, { token: agent.token }))
        .status,
    ).toBe(403)
    expect(
      (
        await t.request('GET', `/v1/tenants/${tenant.id}/audit-events?format=csv`, {
          token: other.admin.token,
        })
      ).status,
    ).toBe(404)
    expect((await t.request('GET', '/v1/audit-events?format=csv', { token: agent.token })).status).toBe(403)
  })

  it('defuses cells a spreadsheet would run as formulas', () => {
    expect(csvCell('=HYPERLINK("http://x")')).toBe(`"'=HYPERLINK(""http://x"")"`)
    expect(csvCell('+1')).toBe("'+1")
    expect(csvCell('-1')).toBe("'-1")
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)")
    expect(csvCell('plain')).toBe('plain')
    expect(csvCell(null)).toBe('')
  })
})
