import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { checkPage } from '../../helpers/console.js'
import { useAdminConsole } from '../../helpers/console-admin.js'
import { createTenantAsAdmin, insertUser, uniqueName } from '../../helpers/fixtures.js'
import { TEST_ADMIN } from '../../helpers/test-env.js'

/**
 * The audit list's CSV download and the "History" links in a real Chromium (docs/console-admin.md "Audit"): the
 * file holds exactly the filtered events; the actor filter takes an e-mail; each record's page links to
 * the audit list filtered to that record, and the link lands on that record's events.
 */
const c = useAdminConsole()

/** The event ids of a CSV export (the first column; changes are JSON, quoted, so rows are parsed). */
function csvIds(text: string): string[] {
  const lines = text.split(/\r?\n/).filter(Boolean)
  expect(lines[0]).toMatch(/^id,occurred,actorType,actorId,action/)
  return lines.slice(1).map((line) => line.split(',')[0]!)
}

describe('audit export and History links', () => {
  it('downloads exactly the filtered events as CSV; the actor filter takes an e-mail', async () => {
    const { page, baseUrl, t, errors } = c
    const tenant = await createTenantAsAdmin(t)
    const admin = await t.adminToken()
    for (const name of [uniqueName('First'), uniqueName('Second')]) {
      const current = await t.request('GET', `/v1/tenants/${tenant.id}`, { token: admin })
      const renamed = await t.request('PUT', `/v1/tenants/${tenant.id}`, {
        token: admin,
        headers: { 'if-match': current.headers.etag as string },
        body: { name },
      })
      expect(renamed.status).toBe(200)
    }
    await t.request('POST', `/v1/tenants/${tenant.id}/webhooks`, {
      token: admin,
      body: { url: 'https://hooks.example.invalid/in', events: ['*'] },
    })
    const expected = await t.request('GET', `/v1/tenants/${tenant.id}/audit-events?action=tenant.updated`, {
      token: admin,
    })
    expect(expected.body.result).toHaveLength(2)

    await page.goto(`${baseUrl}/console/tenants/${tenant.id}/history`)
    await page.getByLabel('Action').fill('tenant.updated')
    await page.getByLabel('Actor').fill(TEST_ADMIN.email)
    await page.getByRole('button', { name: 'Filter' }).click()
    expect(await page.getByRole('row').filter({ hasText: 'tenant.updated' }).count()).toBe(2)
    await checkPage(page, 'history-actor-email', errors)
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download CSV' }).click(),
    ])
    const ids = csvIds(readFileSync((await download.path())!, 'utf8'))
    expect(ids.sort()).toEqual(expected.body.result.map((e: { id: string }) => e.id).sort())

    // Unfiltered, the file holds every event of the tenant (the webhook's too), not one page of them.
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}/history`)
    const [all] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download CSV' }).click(),
    ])
    const every = await t.request('GET', `/v1/tenants/${tenant.id}/audit-events?limit=100`, { token: admin })
    expect(csvIds(readFileSync((await all.path())!, 'utf8')).sort()).toEqual(
      every.body.result.map((e: { id: string }) => e.id).sort(),
    )

    // An e-mail nobody has: the refusal beside the field, no events.
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}/history?actor=nobody%40nowhere.example`)
    expect(await page.getByRole('alert').textContent()).toContain(
      'Actor is not the e-mail of a user you can see',
    )
    errors.length = 0 // a refused filter answers 400, which Chromium logs as a failed load
  }, 240_000)

  it("each record's History link opens the audit list filtered to that record", async () => {
    const { page, baseUrl, t, errors } = c
    const tenant = await createTenantAsAdmin(t)
    const admin = await t.adminToken()
    const base = `${baseUrl}/console/tenants/${tenant.id}`
    const role = await t.request('POST', `/v1/tenants/${tenant.id}/roles`, {
      token: admin,
      body: { name: uniqueName('Role'), permissions: [] },
    })
    expect(role.status).toBe(201)
    const integration = await t.request('POST', `/v1/tenants/${tenant.id}/integrations`, {
      token: admin,
      body: { type: 'rest', name: 'Rest hook', properties: {} },
    })
    const person = await insertUser(t.database.handle.db)
    const member = await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
      token: admin,
      body: { email: person.email, roleId: ROLE_IDS.agent, status: 'invited' },
    })
    expect(member.status).toBe(201)
    const memberId = person.id
    const key = await t.request('POST', `/v1/tenants/${tenant.id}/api-keys`, {
      token: admin,
      body: { name: 'Sync key', roleId: role.body.result.id },
    })
    expect(key.status).toBe(201)
    const platformUser = await t.request('POST', '/v1/users', {
      token: admin,
      body: {
        email: `${uniqueName('history').toLowerCase().replace(/\W+/g, '.')}@example.test`,
        roleId: ROLE_IDS.platformUser,
      },
    })
    expect(platformUser.status).toBe(201)

    const cases: { name: string; open: string; link: string; id: string; action: string }[] = [
      {
        name: 'role',
        open: `${base}/roles/${role.body.result.id}/edit`,
        link: 'History',
        id: role.body.result.id,
        action: 'role.created',
      },
      {
        name: 'role in the roles list',
        open: `${base}/roles`,
        link: `History of ${role.body.result.name}`,
        id: role.body.result.id,
        action: 'role.created',
      },
      {
        name: 'integration',
        open: `${base}/integrations/${integration.body.result.id}`,
        link: 'History',
        id: integration.body.result.id,
        action: 'integration.created',
      },
      {
        name: 'member',
        open: `${base}/members/${memberId}`,
        link: 'History',
        id: memberId,
        action: 'membership.invited',
      },
      {
        name: 'API key',
        open: `${base}/api-keys`,
        link: 'History of Sync key',
        id: key.body.result.id,
        action: 'api_key.created',
      },
      {
        name: 'platform user',
        open: `${baseUrl}/console/users/${platformUser.body.result.id}`,
        link: 'History',
        id: platformUser.body.result.id,
        action: 'user.created',
      },
    ]
    // The tenant's own History is all its events (with its sub-tenants'), the tenant's creation among them.
    await page.goto(base)
    await page.getByRole('link', { name: 'History', exact: true }).click()
    await page.waitForURL(`${base}/history`)
    expect(await page.getByRole('cell', { name: 'tenant.created' }).count()).toBe(1)
    for (const one of cases) {
      await page.goto(one.open)
      await page.getByRole('link', { name: one.link, exact: true }).click()
      await page.waitForURL((url) => url.searchParams.get('targetId') === one.id)
      const targets = await page.locator('td[data-label="Target"] code').allTextContents()
      expect(targets.length, one.name).toBeGreaterThan(0)
      expect(new Set(targets), one.name).toEqual(new Set([one.id]))
      expect(await page.getByRole('cell', { name: one.action }).count(), one.name).toBe(1)
    }
    await checkPage(page, 'history-of-record', errors)
  }, 240_000)
})
