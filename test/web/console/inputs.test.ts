import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { checkPage } from '../../helpers/console.js'
import { useAdminConsole } from '../../helpers/console-admin.js'
import { createTenantAsAdmin, uniqueName } from '../../helpers/fixtures.js'

/**
 * What the console's routes accept (docs/console.md "Inputs and refusals"), in Chromium as the
 * administrator: each kind of input a console page did not make — a path id, a form, a query string —
 * is refused before its page runs, drawn as a console page (never the API's JSON), and changes nothing.
 * "No API call" is read where an operator reads it: the service's request counts at /metrics.
 */
const c = useAdminConsole()

/** How many /v1 requests the service has answered so far (its own request histogram's counts). */
async function apiCalls(): Promise<number> {
  const metrics = (await c.t.request<string>('GET', '/metrics')).body
  let total = 0
  for (const line of metrics.split('\n')) {
    const count = /^tenantry_http_request_duration_seconds_count\{[^}]*route="\/v1\/[^"]*"[^}]*\} (\d+)/.exec(
      line,
    )
    if (count) total += Number(count[1])
  }
  return total
}

/** The fields of the page's form that posts to `action`, as the browser would send them. */
async function formFields(page: Page, action: string): Promise<Record<string, string>> {
  return page
    .locator(`form[method="post"][action="${action}"]`)
    .evaluate((form) => Object.fromEntries(new FormData(form as HTMLFormElement) as never))
}

function post(page: Page, path: string, fields: Record<string, string>) {
  return page.request.post(`${c.baseUrl}${path}`, {
    // What the browser sends with a form of this site: its origin, and the page the form was on.
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: c.baseUrl,
      referer: `${c.baseUrl}${path}`,
    },
    data: new URLSearchParams(fields).toString(),
    maxRedirects: 0,
  })
}

describe('inputs no console page makes', { timeout: 120_000 }, () => {
  it('a malformed id in the path is the Not found page, and the API is not asked', async () => {
    const { page, baseUrl } = c
    const tenant = await createTenantAsAdmin(c.t)
    // A first page reads the person's identity; the pages after it in the same minute do not.
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}`)
    for (const [path, message] of [
      [`/console/tenants/${tenant.id}/webhooks/not-an-id`, 'No such webhook'],
      [`/console/tenants/${tenant.id}/members/12345`, 'No such member'],
      ['/console/tenants/not-a-tenant/roles', 'No such tenant'],
      ['/console/users/%27%3Cscript%3E', 'No such user'],
    ] as const) {
      const before = await apiCalls()
      const response = await page.goto(`${baseUrl}${path}`)
      expect(response?.status(), path).toBe(404)
      expect(await page.getByRole('heading', { level: 1 }).textContent(), path).toBe('Not found')
      expect(await page.getByRole('alert').textContent(), path).toContain(message)
      expect(await apiCalls(), `${path} asked the API`).toBe(before)
    }
    // Still the person's own frame: their name and the way out.
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(1)
    await checkPage(page, 'not-found', [])
  })

  it('a form field longer than any form sends is the 400 page naming it; nothing is changed', async () => {
    const { page, baseUrl, t } = c
    const tenant = await createTenantAsAdmin(t)
    const edit = `/console/tenants/${tenant.id}/edit`
    await page.goto(`${baseUrl}${edit}`)
    const fields = await formFields(page, edit)
    const before = await apiCalls()
    const refused = await post(page, edit, { ...fields, name: 'x'.repeat(5_000) })
    expect(refused.status()).toBe(400)
    expect(await apiCalls(), 'the refused form reached the API').toBe(before)
    const body = await refused.text()
    expect(body).toContain('This form could not be accepted')
    expect(body).toMatch(/<code>name<\/code> is longer than the console accepts \(at most 4096 characters\)/)
    expect(body).toContain(`href="${edit}"`)
    const after = await t.request('GET', `/v1/tenants/${tenant.id}`, { token: await t.adminToken() })
    expect(after.body.result.name).toBe(tenant.name)

    // A name the API refuses, within the console's bound, is still the form again with the error beside it.
    await page.getByLabel('Name').fill('x'.repeat(300))
    await page.getByRole('button', { name: 'Save changes' }).click()
    expect(await page.getByLabel('Name').getAttribute('aria-invalid')).toBe('true')

    // The 400 page as a person meets it: in the console's frame, passing the page checks.
    await page.goto(`${baseUrl}${edit}`)
    await page.getByLabel('Name').evaluate((input) => {
      ;(input as HTMLInputElement).value = 'y'.repeat(5_000)
    })
    await page.getByRole('button', { name: 'Save changes' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      'This form could not be accepted',
    )
    await checkPage(page, 'form-not-accepted', [])
  })

  it('a choice no form offers (a malformed role id, an unknown status) is refused before the API', async () => {
    const { page, baseUrl, t } = c
    const tenant = await createTenantAsAdmin(t)
    const invite = `/console/tenants/${tenant.id}/members/invite`
    await page.goto(`${baseUrl}${invite}`)
    const fields = await formFields(page, invite)
    const email = `${uniqueName('forged').toLowerCase().replace(/\s/g, '')}@example.test`
    const before = await apiCalls()
    const refused = await post(page, invite, { ...fields, emails: email, roleId: 'admin', mode: 'owner' })
    expect(refused.status()).toBe(400)
    expect(await apiCalls()).toBe(before)
    const body = await refused.text()
    expect(body).toContain('<code>roleId</code> must be a UUID')
    expect(body).toContain('<code>mode</code> must be one of')
    const members = await t.request('GET', `/v1/tenants/${tenant.id}/users?q=${email}`, {
      token: await t.adminToken(),
    })
    expect(members.body.result).toEqual([])
  })

  it('a query string a page does not offer is the 400 page with the page without it', async () => {
    const { page, baseUrl } = c
    const tenant = await createTenantAsAdmin(c.t)
    const members = `/console/tenants/${tenant.id}/members`
    for (const query of ['?status=everyone', '?q=a&q=b', `?cursor=${'c'.repeat(2_000)}`]) {
      const response = await page.goto(`${baseUrl}${members}${query}`)
      expect(response?.status(), query).toBe(400)
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
        'This address could not be used',
      )
    }
    await checkPage(page, 'address-not-accepted', [])
    await page.getByRole('link', { name: 'Open the page without it' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Members of ${tenant.name}`)
    // A filter the page offers still works, and an unknown parameter is simply not read.
    const filtered = await page.goto(`${baseUrl}${members}?status=invited&utm_source=mail`)
    expect(filtered?.status()).toBe(200)
  })

  it('a link to the invitation or reset page that no e-mail holds is its "link not valid" page', async () => {
    for (const [path, heading] of [
      ['/invitations/accept?token=a&token=b', 'This invitation link is not valid'],
      [`/password-reset?token=${'t'.repeat(2_000)}`, 'This password-reset link is not valid'],
    ] as const) {
      const response = await c.page.goto(`${c.baseUrl}${path}`)
      expect(response?.status(), path).toBe(404)
      expect(await c.page.getByRole('heading', { level: 1 }).textContent(), path).toContain(heading)
    }
  })
})
