import type { Browser, BrowserContext } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import {
  type ConsoleInBrowser,
  checkPage,
  openPage,
  signIn,
  startConsoleInBrowser,
} from '../../helpers/console.js'
import { freshTenant, insertMembership, insertUser } from '../../helpers/fixtures.js'
import type { TestSmtpServer } from '../../helpers/smtp.js'
import type { TestApp } from '../../helpers/test-app.js'

/**
 * Members and invitations in the console (docs/console.md), in a real Chromium: inviting many by pasting their
 * addresses (a result per person), the mail arriving at a real SMTP server and its state reaching "sent"
 * on the members page, the actions on a membership, and the role ceiling: a Supervisor's forged form
 * assigning Administrator is refused with a visible 403.
 */
let pages: ConsoleInBrowser
let t: TestApp
let smtp: TestSmtpServer
let baseUrl: string
let browser: Browser
let withJs: BrowserContext

beforeAll(async () => {
  pages = await startConsoleInBrowser()
  ;({ t, baseUrl, smtp, browser, withJs } = pages)
})
afterAll(async () => pages?.close())

describe('members in the console', { timeout: 180_000 }, () => {
  // The API invites platform users that exist (a new address is 404 user_not_found, reported per person).
  it('invites two pasted addresses; the mails arrive and the members page says "sent"', async () => {
    const { tenant, admin } = await freshTenant(t)
    const { page, errors } = await openPage(withJs)
    await signIn(page, baseUrl, admin.email, admin.password)
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}`)
    await page.getByRole('link', { name: 'Members' }).click()
    await checkPage(page, 'members', errors)
    await page.getByRole('link', { name: 'Invite people' }).click()
    const [first, second] = await Promise.all([
      insertUser(t.database.handle.db).then((u) => u.email),
      insertUser(t.database.handle.db).then((u) => u.email),
    ])
    await page.getByLabel('E-mail addresses').fill(`${first}\n${second}, not-an-address`)
    expect(await page.getByLabel('Role').inputValue()).toBe(ROLE_IDS.agent)
    await checkPage(page, 'invite', errors)
    await page.getByRole('button', { name: 'Invite' }).click()
    expect(await page.getByRole('status').textContent()).toContain('2 of 3 done')
    expect(await page.getByRole('row', { name: new RegExp(first) }).textContent()).toContain('Invited')
    expect(await page.getByRole('row', { name: /not-an-address/ }).textContent()).toContain('Not done')
    await checkPage(page, 'invite-results', errors)

    await smtp.waitForMailTo(first, 1)
    await smtp.waitForMailTo(second, 1)
    let state = ''
    for (let i = 0; i < 50 && !state.includes('sent'); i++) {
      await page.goto(`${baseUrl}/console/tenants/${tenant.id}/members?status=invited`)
      state = (await page.getByRole('row', { name: new RegExp(first) }).textContent()) ?? ''
      if (!state.includes('sent')) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(state).toContain('sent')
    expect(state).toMatch(/expires in \d+ (h|days)/)
    await page.getByLabel('Search').fill(second)
    await page.getByRole('button', { name: 'Filter' }).click()
    expect(await page.getByRole('row').count()).toBe(2)
    await page.close()
  })

  it('searches on the server and pages the matches, keeping the search on the next page', async () => {
    const { tenant, admin } = await freshTenant(t)
    const marker = `needle${Date.now().toString(36)}`
    const db = t.database.handle.db
    // 55 matches (one page is 50) among others that do not match.
    const users = await Promise.all([
      ...Array.from({ length: 55 }, (_, i) => insertUser(db, { email: `${marker}.${i}@example.test` })),
      ...Array.from({ length: 5 }, () => insertUser(db)),
    ])
    for (const user of users) {
      await insertMembership(db, { tenantId: tenant.id, userId: user.id, roleId: ROLE_IDS.agent })
    }
    // A context of its own: its sign-in must not carry over to the next test's.
    const context = await browser.newContext()
    const { page } = await openPage(context)
    await signIn(page, baseUrl, admin.email, admin.password)
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}/members`)
    await page.getByLabel('Search').fill(marker.toUpperCase())
    // Each click loads a page: wait for it before counting (count() does not wait, and a loaded machine
    // still shows the page before).
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/[?&]q=/)
    const matches = page.getByRole('row', { name: new RegExp(marker) })
    expect(await matches.count()).toBe(50)
    await page.getByRole('link', { name: 'Next page' }).click()
    await page.waitForURL(/[?&]cursor=/)
    expect(await page.getByLabel('Search').inputValue()).toBe(marker.toUpperCase())
    expect(await matches.count()).toBe(5)
    expect(await page.getByRole('row').count()).toBe(6)
    expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(0)
    await context.close()
  })

  it('names a member whose names are only spaces or invisible characters by their e-mail', async () => {
    const { tenant, admin } = await freshTenant(t)
    const db = t.database.handle.db
    const unnamed = []
    for (const [first, last] of [
      ['   ', ' '],
      ['\u200B', '\u2060\u200B'],
    ] as const) {
      const user = await insertUser(db)
      await db
        .updateTable('users')
        .set({ first_name: first, last_name: last })
        .where('id', '=', user.id)
        .execute()
      await insertMembership(db, { tenantId: tenant.id, userId: user.id, roleId: ROLE_IDS.agent })
      unnamed.push(user)
    }
    const context = await browser.newContext()
    const { page, errors } = await openPage(context)
    await signIn(page, baseUrl, admin.email, admin.password)
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}/members`)
    for (const person of unnamed) {
      const link = page.getByRole('link', { name: person.email, exact: true })
      expect(await link.count(), person.email).toBe(1)
      expect(await link.getAttribute('href'), person.email).toBe(
        `/console/tenants/${tenant.id}/members/${person.id}`,
      )
    }
    await checkPage(page, 'members-unnamed', errors)
    await page.getByRole('link', { name: unnamed[1]!.email, exact: true }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(unnamed[1]!.email)
    await context.close()
  })

  it('accepts at once, disables, re-enables, cancels and removes, with JavaScript off', async () => {
    const { tenant, admin } = await freshTenant(t)
    const invited = (await insertUser(t.database.handle.db)).email
    const created = await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
      token: admin.token,
      body: { email: invited, roleId: ROLE_IDS.agent, status: 'pending' },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const { page } = await openPage(pages.context)
    await signIn(page, baseUrl, admin.email, admin.password)
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}/members`)
    const row = () => page.getByRole('row', { name: new RegExp(invited) })
    expect(await row().count()).toBe(1)
    await row().getByRole('button', { name: 'Accept now' }).click()
    expect(await page.getByRole('status').textContent()).toContain(invited)
    expect(await row().textContent()).toContain('enabled')
    await row().getByRole('button', { name: 'Disable' }).click()
    expect(await row().textContent()).toContain('disabled')
    await row().getByRole('button', { name: 'Re-enable' }).click()
    expect(await row().textContent()).toContain('enabled')
    await row().getByRole('button', { name: 'Remove' }).click()
    expect(await row().count()).toBe(0)
    await page.close()
  })

  it('shows the roles a Supervisor may not assign as disabled; a forged form assigning Administrator gets a visible 403', async () => {
    const { tenant } = await freshTenant(t)
    const supervisor = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: supervisor.id,
      roleId: ROLE_IDS.supervisor,
    })
    const agent = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: agent.id,
      roleId: ROLE_IDS.agent,
    })
    t.ctx.access.invalidate()
    const context = await browser.newContext()
    const { page, errors } = await openPage(context)
    await signIn(page, baseUrl, supervisor.email, supervisor.password)
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}/members/${agent.id}`)
    const administrator = page.getByRole('option', { name: /Administrator/ })
    expect(await administrator.isDisabled()).toBe(true)
    expect(await page.getByText(/Administrator: you may not assign it/).count()).toBe(1)
    await checkPage(page, 'member', errors)

    // The forged form: the disabled option made selectable and chosen.
    await administrator.evaluate((option) => option.removeAttribute('disabled'))
    await page.getByLabel('Role').selectOption(ROLE_IDS.administrator)
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/role')),
      page.getByRole('button', { name: 'Change role' }).click(),
    ])
    expect(response.status()).toBe(403)
    await page.waitForLoadState()
    expect(await page.getByRole('alert').textContent()).toMatch(/role|permission/i)
    const after = await t.request('GET', `/v1/tenants/${tenant.id}/users/${agent.id}`, {
      token: await t.adminToken(),
    })
    expect(after.body.result.roleId).toBe(ROLE_IDS.agent)
    await context.close()
  })
})
