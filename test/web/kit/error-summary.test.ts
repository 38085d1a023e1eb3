import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type ConsoleInBrowser,
  checkPage,
  checkPageAtBothSizes,
  openPage,
  startConsoleInBrowser,
} from '../../helpers/console.js'
import { insertUser } from '../../helpers/fixtures.js'
import { resetTokenIn } from '../../helpers/smtp.js'

/**
 * The page kit's error summary (docs/pages.md) as a person with a screen reader meets it, on a console
 * page (JavaScript on) and on a public page (JavaScript off): focus lands on the summary, the
 * announcement sits on an inner role="alert" — never on the focused element — and names the errors, and
 * the title starts "Error: " exactly when the page shows errors.
 */
let pages: ConsoleInBrowser

beforeAll(async () => {
  pages = await startConsoleInBrowser()
})
afterAll(async () => pages?.close())

/** What the focused element is, and the alerts of the page, as assistive technology reads them. */
async function focusAndAlerts(page: Page) {
  const focused = await page.evaluate(() => {
    const element = document.activeElement
    return {
      isSummary: element?.hasAttribute('data-error-summary') ?? false,
      role: element?.getAttribute('role') ?? null,
      innerAlerts: element?.querySelectorAll('[role="alert"]').length ?? 0,
    }
  })
  const alerts = page.getByRole('alert')
  return { focused, alertCount: await alerts.count(), alertText: await alerts.first().innerText() }
}

describe('the error summary in Chromium', { timeout: 180_000 }, () => {
  it('on a console page: focus on the summary, the alert inside it names the error, title "Error: …" once', async () => {
    const context = await pages.browser.newContext()
    const { page, errors } = await openPage(context)
    await page.goto(`${pages.baseUrl}/console/sign-in`)
    expect(await page.title()).toBe('Sign in · Tenantry console')

    await page.getByRole('button', { name: 'Continue' }).click()
    await page.waitForLoadState()
    expect(await page.title()).toBe('Error: Sign in · Tenantry console')
    const { focused, alertCount, alertText } = await focusAndAlerts(page)
    expect(focused).toEqual({ isSummary: true, role: null, innerAlerts: 1 })
    expect(alertCount).toBe(1)
    expect(alertText).toContain('There is a problem')
    expect(alertText).toContain('E-mail is required')
    await checkPage(page, 'error-summary', errors)
    await context.close()
  })

  it('on a public page with JavaScript off: the same summary, focused without a script', async () => {
    const user = await insertUser(pages.t.database.handle.db)
    const asked = await pages.t.request('POST', '/v1/request-password-reset', { body: { email: user.email } })
    expect(asked.status).toBe(200)
    const [mail] = await pages.smtp.waitForMailTo(user.email, 1)
    const { page, errors } = await openPage(pages.context, true)
    await page.goto(`${pages.baseUrl}/password-reset?token=${encodeURIComponent(resetTokenIn(mail!))}`)
    expect(await page.title()).toBe('Choose a new password · Tenantry')

    await page.getByLabel('New password').fill('a long enough password')
    await page.getByLabel('Repeat the password').fill('another long password')
    await page.getByLabel('Repeat the password').press('Enter')
    await page.waitForLoadState()
    expect(await page.title()).toBe('Error: Choose a new password · Tenantry')
    const { focused, alertCount, alertText } = await focusAndAlerts(page)
    expect(focused).toEqual({ isSummary: true, role: null, innerAlerts: 1 })
    expect(alertCount).toBe(1)
    expect(alertText).toContain('Repeat the password does not match the password')
    // The summary links to the field, which says the same beside it.
    await page.getByRole('link', { name: 'Repeat the password does not match the password' }).click()
    expect(await page.evaluate(() => location.hash)).toBe('#passwordConfirmation')
    await checkPageAtBothSizes(page, 'error-summary-public', errors, pages.withJs)
  })
})
