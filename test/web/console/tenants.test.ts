import type { Browser, BrowserContext } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import {
  type ConsoleInBrowser,
  checkPage,
  expectNoTokenInPage,
  openPage,
  signIn,
  startConsoleInBrowser,
} from '../../helpers/console.js'
import { createTenantAsAdmin, insertUser, uniqueName } from '../../helpers/fixtures.js'
import type { TestApp } from '../../helpers/test-app.js'
import { TEST_ADMIN } from '../../helpers/test-env.js'

/**
 * The console's foundation and tenants in a real Chromium (docs/console.md): signing in and out, the session
 * cookie, the tree (keyboard only, down to a leaf), creating and editing tenants with and without
 * JavaScript, a stale edit, and the attacks: a cross-site form post, markup in a name, the token's reach.
 */
let pages: ConsoleInBrowser
let t: TestApp
let baseUrl: string
let browser: Browser
let withJs: BrowserContext

beforeAll(async () => {
  pages = await startConsoleInBrowser(['withJs'])
  ;({ t, baseUrl, browser, withJs } = pages)
})
afterAll(async () => pages?.close())

describe('the console in Chromium', { timeout: 120_000 }, () => {
  it('signs in by e-mail then password; the cookie is HttpOnly, SameSite=Strict; no token reaches the page', async () => {
    const fresh = await browser.newContext()
    const { page, errors } = await openPage(fresh)
    await page.goto(`${baseUrl}/console`)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in')
    await checkPage(page, 'sign-in', errors)
    await page.getByRole('button', { name: 'Continue' }).click()
    expect(await page.getByRole('alert').textContent()).toContain('E-mail is required')
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-error-summary'))).toBe('')
    await checkPage(page, 'sign-in-error', errors)
    await page.getByLabel('E-mail').fill(TEST_ADMIN.email)
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByLabel('Password').fill('not the password')
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    expect(await page.getByRole('alert').textContent()).toContain('Password is not right')
    await page.getByLabel('Password').fill(TEST_ADMIN.password)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.waitForURL(/\/console\/tenants$/)

    const [cookie] = (await fresh.cookies()).filter((c) => c.name === 'tenantry_console')
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' })
    await expectNoTokenInPage(page)
    const response = await page.goto(`${baseUrl}/console/tenants`)
    const headers = response!.headers()
    expect(headers['content-security-policy']).toMatch(/default-src 'none'; script-src 'nonce-[^']+'/)
    expect(headers['content-security-policy']).toContain(
      "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    )
    expect(headers['content-security-policy']).not.toContain('unsafe')
    expect(headers).toMatchObject({
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
      'cache-control': 'no-store',
    })
    await fresh.close()
  })

  it('draws the tree collapsed below the first level; a keyboard reaches a leaf tenant', async () => {
    const root = await createTenantAsAdmin(t, { name: uniqueName('Root') })
    const middle = await createTenantAsAdmin(t, { name: uniqueName('Middle'), parentId: root.id })
    const leaf = await createTenantAsAdmin(t, { name: uniqueName('Leaf'), parentId: middle.id })
    const { page, errors } = await openPage(withJs)
    await page.goto(`${baseUrl}/console/tenants`)
    expect(await page.getByRole('link', { name: root.name, exact: true }).count()).toBe(1)
    expect(await page.getByRole('link', { name: middle.name, exact: true }).count()).toBe(0)

    // Keyboard only: Tab to the disclosure of the root, Enter, again for the middle, then the leaf itself.
    const tabTo = async (name: string) => {
      for (let i = 0; i < 400; i++) {
        await page.keyboard.press('Tab')
        const focused = await page.evaluate(() => document.activeElement?.textContent ?? '')
        if (focused.includes(name)) return
      }
      throw new Error(`no focusable element named ${name}`)
    }
    await tabTo(`Show the sub-tenant of ${root.name}`)
    await page.keyboard.press('Enter')
    await page.waitForURL(/open=/)
    await tabTo(`Show the sub-tenant of ${middle.name}`)
    await page.keyboard.press('Enter')
    await page.waitForURL(new RegExp(middle.id))
    await checkPage(page, 'tenant-tree', errors)
    await tabTo(leaf.name)
    await page.keyboard.press('Enter')
    await page.waitForURL(new RegExp(`/console/tenants/${leaf.id}$`))
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(leaf.name)
    await checkPage(page, 'tenant', errors)
    await page.close()
  })

  it('creates a root and a sub-tenant and edits one, with JavaScript off; a double submit creates once', async () => {
    const { page } = await openPage(pages.context)
    await signIn(page, baseUrl, TEST_ADMIN.email, TEST_ADMIN.password)
    await page.getByRole('link', { name: 'New tenant' }).click()
    const name = uniqueName('Console')
    await page.getByLabel('Name').fill(name)
    await page.getByLabel('Description').fill('Made in the console')
    await page.getByLabel('Timezone').fill('Europe/Dublin')
    // The same form sent twice (a double click): the Idempotency-Key makes it one tenant.
    const form = await page
      .locator('form[action="/console/tenants"]')
      .evaluate((f) => new URLSearchParams(new FormData(f as HTMLFormElement) as never).toString())
    const post = () =>
      page.request.post(`${baseUrl}/console/tenants`, {
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: baseUrl },
        data: form,
        maxRedirects: 0,
      })
    const [first, second] = [await post(), await post()]
    expect(first.status()).toBe(303)
    expect(second.headers().location).toBe(first.headers().location)
    const found = (await t.request('GET', '/v1/tenants', { token: await t.adminToken() })).body.result.filter(
      (x: { name: string }) => x.name === name,
    )
    expect(found).toHaveLength(1)

    await page.goto(`${baseUrl}${first.headers().location}`)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(name)
    await page.getByRole('link', { name: 'New sub-tenant' }).click()
    const child = uniqueName('Child')
    await page.getByLabel('Name').fill(child)
    await page.getByRole('button', { name: 'Create tenant' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(child)
    expect(await page.getByRole('link', { name }).count()).toBeGreaterThan(0)

    await page.getByRole('link', { name: 'Edit tenant' }).click()
    await page.getByLabel('Name').fill('')
    await page.getByRole('button', { name: 'Save changes' }).click()
    expect(await page.getByRole('alert').textContent()).toContain('Name')
    expect(await page.getByLabel('Name').getAttribute('aria-invalid')).toBe('true')
    await page.getByLabel('Name').fill(`${child} renamed`)
    await page.getByLabel('Active').uncheck()
    await page.getByRole('button', { name: 'Save changes' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`${child} renamed`)
    expect(await page.getByText('No', { exact: true }).count()).toBe(1)
    await page.close()
  })

  it('a stale edit shows "changed meanwhile" and overwrites nothing', async () => {
    const tenant = await createTenantAsAdmin(t)
    const { page, errors } = await openPage(withJs)
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}/edit`)
    await checkPage(page, 'tenant-edit', errors)
    const meanwhile = await t.request('PUT', `/v1/tenants/${tenant.id}`, {
      token: await t.adminToken(),
      body: { description: 'theirs' },
    })
    expect(meanwhile.status).toBe(200)
    await page.getByLabel('Description').fill('mine')
    await page.getByRole('button', { name: 'Save changes' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      'This tenant was changed meanwhile',
    )
    await checkPage(page, 'changed-meanwhile', errors)
    const now = await t.request('GET', `/v1/tenants/${tenant.id}`, { token: await t.adminToken() })
    expect(now.body.result.description).toBe('theirs')
    await page.close()
  })

  it('renders a tenant named <script>alert(1)</script> as text', async () => {
    const tenant = await createTenantAsAdmin(t, { name: `<script>alert(1)</script> ${uniqueName('')}` })
    const { page, errors } = await openPage(withJs)
    let dialogs = 0
    page.on('dialog', async (dialog) => {
      dialogs++
      await dialog.dismiss()
    })
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}`)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(tenant.name)
    await page.goto(`${baseUrl}/console/tenants`)
    expect(await page.getByText(tenant.name).count()).toBe(1)
    expect(dialogs).toBe(0)
    expect(errors).toEqual([])
    await page.close()
  })

  it('a cross-site form post, without the form token or from another origin, changes nothing', async () => {
    const tenant = await createTenantAsAdmin(t)
    const { page } = await openPage(withJs)
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}/edit`)
    const fields = await page
      .locator('form[method="post"][action$="/edit"]')
      .evaluate((f) => Object.fromEntries(new FormData(f as HTMLFormElement) as never))
    const send = (data: Record<string, string>, origin: string) =>
      page.request.post(`${baseUrl}/console/tenants/${tenant.id}/edit`, {
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
        data: new URLSearchParams({ ...data, name: 'Hijacked', administrator: TEST_ADMIN.email }).toString(),
        maxRedirects: 0,
      })
    const { formToken: _dropped, ...withoutToken } = fields as Record<string, string>
    const noToken = await send(withoutToken, baseUrl)
    expect(noToken.status()).toBe(403)
    expect(await noToken.text()).toContain('Nothing was changed')
    const otherSite = await send(fields as Record<string, string>, 'https://attacker.example')
    expect(otherSite.status()).toBe(403)
    const after = await t.request('GET', `/v1/tenants/${tenant.id}`, { token: await t.adminToken() })
    expect(after.body.result.name).toBe(tenant.name)
    // The same form with its token and this origin goes through: the refusals were the defence.
    expect((await send(fields as Record<string, string>, baseUrl)).status()).toBe(303)
    await page.close()
  })

  it('signs out: the session is gone, its cookie no longer opens a page', async () => {
    const context = await browser.newContext()
    const { page } = await openPage(context)
    await signIn(page, baseUrl, TEST_ADMIN.email, TEST_ADMIN.password)
    const cookies = await context.cookies()
    await page.getByRole('button', { name: 'Sign out' }).click()
    expect(await page.getByText('You are signed out.').count()).toBe(1)
    await context.addCookies(cookies)
    await page.goto(`${baseUrl}/console/tenants`)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in')
    await context.close()
  })

  it('signing out ends the API session too, not only the console row, so the token it held is revoked', async () => {
    const person = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
    const liveSessions = async () =>
      (
        await t.database.handle.db
          .selectFrom('user_sessions')
          .select('id')
          .where('user_id', '=', person.id)
          .where('revoked_at', 'is', null)
          .execute()
      ).length
    const context = await browser.newContext()
    const { page } = await openPage(context)
    await signIn(page, baseUrl, person.email, person.password)
    expect(await liveSessions()).toBe(1)
    await page.getByRole('button', { name: 'Sign out' }).click()
    expect(await page.getByText('You are signed out.').count()).toBe(1)
    expect(await liveSessions()).toBe(0)
    await context.close()
  })

  it('the session ends at once when the person is disabled', async () => {
    const person = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
    const context = await browser.newContext()
    const { page } = await openPage(context)
    await signIn(page, baseUrl, person.email, person.password)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Tenants')
    const disabled = await t.request('PUT', `/v1/users/${person.id}`, {
      token: await t.adminToken(),
      body: { status: 'disabled' },
    })
    expect(disabled.status).toBe(200)
    await page.goto(`${baseUrl}/console/tenants`)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in')
    await context.close()
  })
})
