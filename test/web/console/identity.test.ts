import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { openPage, signIn } from '../../helpers/console.js'
import { useAdminConsole } from '../../helpers/console-admin.js'
import { createTenantAsAdmin, memberWithToken, uniqueName } from '../../helpers/fixtures.js'
import { TEST_ADMIN } from '../../helpers/test-env.js'

/**
 * The signed-in person's identity (docs/console.md "Sessions"): read from the API at sign-in and kept
 * with the session, not asked again on every page; read again when it can have changed — after a minute,
 * or right after the console changed something through the API. Counted where an operator counts it:
 * the service's requests of `POST /v1/login` at /metrics.
 */
const c = useAdminConsole()

async function identityReads(): Promise<number> {
  const metrics = (await c.t.request<string>('GET', '/metrics')).body
  let total = 0
  for (const line of metrics.split('\n')) {
    if (!line.startsWith('tenantry_http_request_duration_seconds_count{')) continue
    if (!line.includes('method="POST"') || !line.includes('route="/v1/login"')) continue
    total += Number(line.split(' ').pop())
  }
  return total
}

describe('the person a console page is drawn for', { timeout: 120_000 }, () => {
  it('is read once per session, and again a minute later with what changed meanwhile', async () => {
    const { t, baseUrl, browser } = c
    const tenant = await createTenantAsAdmin(t)
    const person = await memberWithToken(t, tenant.id, ROLE_IDS.agent)
    const context = await browser.newContext()
    try {
      const { page } = await openPage(context)
      await signIn(page, baseUrl, person.email, person.password)
      const before = await identityReads()
      for (const path of [
        '/console/tenants',
        `/console/tenants/${tenant.id}`,
        `/console/tenants/${tenant.id}/members`,
      ])
        expect((await page.goto(`${baseUrl}${path}`))?.status(), path).toBe(200)
      expect(await identityReads(), 'pages asked who the person is').toBe(before)
      await page.goto(`${baseUrl}/console/tenants/${tenant.id}`)
      expect(await page.getByRole('link', { name: 'Edit tenant' }).count()).toBe(0)

      // Made the tenant's Administrator elsewhere: the console shows it once its minute is over.
      const promoted = await t.request('PUT', `/v1/tenants/${tenant.id}/users/${person.id}`, {
        token: await t.adminToken(),
        body: { roleId: ROLE_IDS.administrator },
      })
      expect(promoted.status).toBe(200)
      t.clock.advance(61_000)
      await page.goto(`${baseUrl}/console/tenants/${tenant.id}`)
      expect(await page.getByRole('link', { name: 'Edit tenant' }).count()).toBe(1)
      expect(await identityReads()).toBe(before + 1)
    } finally {
      await context.close()
    }
  })

  it('is read again right after the console changed something: a new name shows at once', async () => {
    const { t, baseUrl, page } = c
    const admin = await t.request('GET', `/v1/users?email=${encodeURIComponent(TEST_ADMIN.email)}`, {
      token: await t.adminToken(),
    })
    const adminId: string = admin.body.result[0].id
    await page.goto(`${baseUrl}/console/users/${adminId}`)
    const firstName = uniqueName('Renamed').replace(/\s/g, '')
    await page.getByLabel('First name').fill(firstName)
    await page.getByRole('button', { name: 'Save changes' }).click()
    expect(await page.getByRole('banner').getByText(firstName).count()).toBe(1)
  })
})
