import { describe, expect, it } from 'vitest'
import { checkPage } from '../helpers/console.js'
import { useAdminConsole } from '../helpers/console-admin.js'
import { createTenantAsAdmin, uniqueName } from '../helpers/fixtures.js'

/**
 * The audit pages in a real Chromium (API.md §17): a tenant's History shows a rename as old → new and a
 * webhook's secret only as ********; filters by action and target; the platform's events page.
 */
const c = useAdminConsole()

describe('audit pages', () => {
  it("shows a tenant's rename as old → new and secrets only as ********, filtered", async () => {
    const { page, baseUrl, t, errors } = c
    const oldName = uniqueName('Before')
    const newName = uniqueName('After')
    const tenant = await createTenantAsAdmin(t, { name: oldName })
    const admin = await t.adminToken()
    const current = await t.request('GET', `/v1/tenants/${tenant.id}`, { token: admin })
    const renamed = await t.request('PUT', `/v1/tenants/${tenant.id}`, {
      token: admin,
      headers: { 'if-match': current.headers.etag as string },
      body: { name: newName },
    })
    expect(renamed.status).toBe(200)
    const hook = await t.request('POST', `/v1/tenants/${tenant.id}/webhooks`, {
      token: admin,
      body: { url: 'https://hooks.example.invalid/in', events: ['*'] },
    })
    expect(hook.status).toBe(201)
    const secret = hook.body.result.secret as string

    await page.goto(`${baseUrl}/console/tenants/${tenant.id}`)
    await page.getByRole('link', { name: 'History' }).click()
    await page.getByLabel('Action').fill('tenant.updated')
    await page.getByRole('button', { name: 'Filter' }).click()
    const rows = page.getByRole('row').filter({ hasText: 'tenant.updated' })
    expect(await rows.count()).toBe(1)
    expect(await rows.textContent()).toContain(`name: ${oldName} → changed to  ${newName}`)
    expect(await page.getByRole('cell', { name: 'tenant.created' }).count()).toBe(0)
    await checkPage(page, 'history-filtered', errors)

    await page.goto(`${baseUrl}/console/tenants/${tenant.id}/history?targetId=${hook.body.result.id}`)
    const markup = await page.content()
    expect(markup).toContain('webhook.created')
    expect(markup).toContain('********')
    expect(markup).not.toContain(secret)
    await checkPage(page, 'history-webhook', errors)

    await page.goto(`${baseUrl}/console/tenants/${tenant.id}/history?since=yesterday`)
    // The refusal names the field by its label, as the form shows it.
    expect(await page.getByRole('alert').textContent()).toContain('From must match format "date-time"')
    errors.length = 0 // the refused filter answers 400, which Chromium logs as a failed load

    await page.goto(`${baseUrl}/console/audit?action=tenant.*`)
    expect(await page.getByRole('cell', { name: 'tenant.updated' }).count()).toBeGreaterThan(0)
    await checkPage(page, 'audit-platform', errors)
  }, 240_000)
})
