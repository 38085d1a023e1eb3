import type { BrowserContext } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PagesInBrowser, startPagesInBrowser } from '../helpers/browser.js'
import { checkPageAtBothSizes, openPage } from '../helpers/console.js'
import { insertUser } from '../helpers/fixtures.js'
import { resetTokenIn, type TestSmtpServer } from '../helpers/smtp.js'
import type { TestApp } from '../helpers/test-app.js'

/**
 * The password reset as a person lives it (docs/api.md#passwords-and-the-existing-clients-flows): the mail arrives at a real SMTP server, its link
 * opens in a real Chromium with JavaScript turned off, the person chooses a new password, and the old
 * one — and every session signed in with it — stops working. Screenshots land in test-output/.
 */
let t: TestApp
let smtp: TestSmtpServer
let context: BrowserContext
let baseUrl: string

let pages: PagesInBrowser
let withJs: BrowserContext

beforeAll(async () => {
  pages = await startPagesInBrowser()
  ;({ t, smtp, baseUrl, context } = pages)
  // The pages run no script; axe-core, which does, checks their HTML in a context with JavaScript on.
  withJs = await context.browser()!.newContext()
})
afterAll(async () => {
  await withJs?.close()
  await pages?.close()
})

describe('the password-reset page in Chromium', () => {
  it('opens the link from the e-mail, sets a new password once; older sessions end', async () => {
    t.clock.set(new Date())
    const user = await insertUser(t.database.handle.db)
    const session = await t.tokenFor(user.email, user.password)
    t.clock.advance(1000)
    const asked = await t.request('POST', '/v1/request-password-reset', { body: { email: user.email } })
    expect(asked.status).toBe(200)
    const [mail] = await smtp.waitForMailTo(user.email, 1)
    const link = new URL(`${baseUrl}/password-reset?token=${encodeURIComponent(resetTokenIn(mail!))}`)
    expect(mail!.text).toContain(link.href)

    const { page, errors } = await openPage(context, true)
    expect((await page.goto(link.href))?.status()).toBe(200)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Choose a new password')
    expect(await page.locator('#email').textContent()).toBe(user.email)

    await page.getByLabel('New password').fill('a much better password')
    await page.getByLabel('Repeat the password').fill('a much better passw0rd')
    await page.getByLabel('Repeat the password').press('Enter')
    await page.waitForLoadState()
    expect(await page.getByRole('alert').textContent()).toContain(
      'Repeat the password does not match the password',
    )
    expect(await page.getByLabel('Repeat the password').getAttribute('aria-invalid')).toBe('true')
    expect(await page.title()).toBe('Error: Choose a new password · Tenantry')
    await checkPageAtBothSizes(page, 'password-reset-error', errors, withJs)

    await page.getByLabel('New password').fill('a much better password')
    await page.getByLabel('Repeat the password').fill('a much better password')
    await checkPageAtBothSizes(page, 'password-reset-form', errors, withJs)
    await page.getByRole('button', { name: 'Set the new password' }).click()
    await page.waitForLoadState()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your password is changed')
    await checkPageAtBothSizes(page, 'password-reset-done', errors, withJs)

    expect((await t.request('POST', '/v1/login', { token: session })).status).toBe(401)
    const fresh = await t.request('POST', '/v1/tokens', {
      body: { username: user.email, password: 'a much better password' },
    })
    expect(fresh.status).toBe(200)
    const old = await t.request('POST', '/v1/tokens', {
      body: { username: user.email, password: user.password },
    })
    expect(old.status).toBe(401)

    // The link worked once.
    expect((await page.goto(link.href))?.status()).toBe(404)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      'This password-reset link is not valid',
    )
    await checkPageAtBothSizes(page, 'password-reset-invalid', errors, withJs)
    t.clock.advance(3_600_000)
    await page.close()
  }, 120_000)

  it('says an expired link expired', async () => {
    const user = await insertUser(t.database.handle.db)
    await t.request('PUT', '/v1/request-password-reset', { body: { email: user.email } })
    const [mail] = await smtp.waitForMailTo(user.email, 1)
    t.clock.advance(3_600_000 + 1000)
    const { page, errors } = await openPage(context, true)
    const expired = await page.goto(`${baseUrl}/password-reset?token=${resetTokenIn(mail!)}`)
    expect(expired?.status()).toBe(410)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      'This password-reset link has expired',
    )
    await checkPageAtBothSizes(page, 'password-reset-expired', errors, withJs)
    await page.close()
  }, 120_000)
})
