import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { checkPage, expectNoTokenInPage } from '../../helpers/console.js'
import {
  checkPageWithoutJs,
  enrolTotpOverHttp,
  enterPassword,
  freshPage,
  heading,
  nextCode,
  tokenWithCode,
  useConsoleOnLocalhost,
} from '../../helpers/console-mfa.js'
import { insertUser } from '../../helpers/fixtures.js'
import { authenticatorFor, enrolPasskeyOverHttp } from '../../helpers/soft-authenticator.js'

/**
 * The second step of signing in to the console (docs/console.md "Second factors"), in Chromium: after a
 * right password for an account with a second factor, a page asks for the authenticator app's code —
 * done here with the keyboard alone, and with JavaScript off —, offers a recovery code, and says a
 * passkey needs JavaScript when it is off. A wrong code is the form again with the error summary and the
 * field's error. The challenge never appears in a URL. TOTP codes are computed here from the key.
 */
const app = useConsoleOnLocalhost()
const t = app.t

/** Tab until the element focused is the one `name` labels (at most 25 presses): the keyboard's way there. */
async function tabTo(page: Page, name: string): Promise<void> {
  for (let i = 0; i < 25; i++) {
    await page.keyboard.press('Tab')
    const focused = await page.evaluate(() => {
      const element = document.activeElement as HTMLElement | null
      if (!element) return ''
      const labelled = element.id ? document.querySelector(`label[for="${element.id}"]`) : null
      return (labelled?.textContent ?? element.textContent ?? '').trim()
    })
    if (focused === name) return
  }
  throw new Error(`the keyboard did not reach “${name}”`)
}

/** Enter in a field: the form is sent, and the page it answers with has loaded. */
async function pressEnterAndLoad(page: Page): Promise<void> {
  await Promise.all([page.waitForEvent('load'), page.keyboard.press('Enter')])
}

const focusedId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? '')

describe('signing in with a second factor', { timeout: 180_000 }, () => {
  it('asks for the authenticator app’s code after the password, with the keyboard alone', async () => {
    const person = await insertUser(t.database.handle.db)
    const { secret } = await enrolTotpOverHttp(t, await t.tokenFor(person.email, person.password))
    const { context, page, errors } = await freshPage(app.browser)
    try {
      await page.goto(`${app.baseUrl}/console`)
      await tabTo(page, 'E-mail')
      await page.keyboard.type(person.email)
      await pressEnterAndLoad(page)
      await tabTo(page, 'Password')
      await page.keyboard.type(person.password)
      await pressEnterAndLoad(page)

      // The second step: the code field has the focus; the challenge is in no URL.
      expect(await heading(page)).toBe('Check it’s you')
      expect(new URL(page.url()).search).toBe('')
      expect(await focusedId(page)).toBe('code')
      expect(await page.getByRole('button', { name: 'Use a recovery code' }).count()).toBe(0)
      await checkPage(page, 'sign-in-second-factor', errors)

      // A wrong code: the form again, the summary focused, the field marked, its error beside it.
      await page.getByLabel('Code from your authenticator app').focus()
      await page.keyboard.type('000000')
      await pressEnterAndLoad(page)
      expect(await heading(page)).toBe('Check it’s you')
      expect(await page.title()).toMatch(/^Error: /)
      expect(await page.evaluate(() => document.activeElement?.hasAttribute('data-error-summary'))).toBe(true)
      expect(await page.getByRole('alert').textContent()).toContain('Code is not right')
      const field = page.getByLabel('Code from your authenticator app')
      expect(await field.getAttribute('aria-invalid')).toBe('true')
      expect(await page.locator('#code-error').textContent()).toContain('Code is not right')
      await checkPage(page, 'sign-in-second-factor-error', errors)

      // The summary's link leads to the field; the right code signs in.
      await page.keyboard.press('Tab')
      await page.keyboard.press('Enter')
      expect(await focusedId(page)).toBe('code')
      await page.keyboard.type(nextCode(t, secret))
      await page.keyboard.press('Enter')
      await page.waitForURL(`${app.baseUrl}/console/tenants`)
      expect(await heading(page)).toBe('Tenants')
      await expectNoTokenInPage(page)
      const sessions = await t.request('GET', '/v1/me/sessions', {
        token: await tokenWithCode(t, person.email, person.password, secret),
      })
      const consoleSession = sessions.body.result.find((s: { current: boolean }) => !s.current)
      expect(consoleSession.authMethods).toEqual(expect.arrayContaining(['pwd', 'otp']))
    } finally {
      await context.close()
    }
  })

  it('works with JavaScript off: the code, a recovery code, and a passkey said to need JavaScript', async () => {
    const person = await insertUser(t.database.handle.db)
    const { secret } = await enrolTotpOverHttp(t, await t.tokenFor(person.email, person.password))
    const token = await tokenWithCode(t, person.email, person.password, secret)
    await enrolPasskeyOverHttp(t, token, authenticatorFor(app.baseUrl), 'Laptop')
    const codes = await t.request('POST', '/v1/me/recovery-codes', { token })
    expect(codes.status).toBe(200)
    const [recoveryCode] = codes.body.result.codes as string[]

    const { context, page, errors } = await freshPage(app.browser, false)
    const withJs = await app.browser.newContext()
    try {
      await enterPassword(page, app.baseUrl, person.email, person.password)
      expect(await heading(page)).toBe('Check it’s you')
      // Without JavaScript the passkey's button stays hidden and the page says why.
      expect(await page.getByRole('button', { name: 'Use a passkey' }).isVisible()).toBe(false)
      // (Playwright's text queries skip <noscript>: the note is found by its element, shown as JavaScript is off.)
      const note = page.locator('noscript p')
      expect(await note.isVisible()).toBe(true)
      expect(await note.textContent()).toContain('A passkey needs JavaScript, which is off in this browser.')
      await checkPageWithoutJs(page, 'sign-in-second-factor-no-js', errors, withJs, app.baseUrl)

      // A recovery code instead: its own form; a wrong one is refused beside the field.
      await page.getByRole('button', { name: 'Use a recovery code' }).click()
      expect(await page.getByLabel('Recovery code').count()).toBe(1)
      await page.getByLabel('Recovery code').fill('AAAAA-BBBBB')
      await page.getByRole('button', { name: 'Continue' }).click()
      expect(await page.getByRole('alert').textContent()).toContain('Recovery code is not right')
      await checkPageWithoutJs(page, 'sign-in-recovery-code-error', errors, withJs, app.baseUrl)
      await page.getByLabel('Recovery code').fill(recoveryCode ?? '')
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.waitForURL(`${app.baseUrl}/console/tenants`)
      expect(await heading(page)).toBe('Tenants')

      // Signed out, then in again with the app's code, still without JavaScript.
      await page.getByRole('button', { name: 'Sign out' }).click()
      await enterPassword(page, app.baseUrl, person.email, person.password)
      await page.getByLabel('Code from your authenticator app').fill(nextCode(t, secret))
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.waitForURL(`${app.baseUrl}/console/tenants`)
      expect(errors).toEqual([])
    } finally {
      await withJs.close()
      await context.close()
    }
  })

  it('refuses a challenge carried to another browser: the sealed field is bound to this one', async () => {
    const person = await insertUser(t.database.handle.db)
    await enrolTotpOverHttp(t, await t.tokenFor(person.email, person.password))
    const first = await freshPage(app.browser)
    const second = await freshPage(app.browser)
    try {
      await enterPassword(first.page, app.baseUrl, person.email, person.password)
      const challenge = await first.page.locator('input[name="challenge"]').first().inputValue()
      expect(challenge.length).toBeGreaterThan(40)
      // Another browser with its own form token posts the first browser's sealed challenge.
      await second.page.goto(`${app.baseUrl}/console/sign-in`)
      const formId = await second.page.locator('input[name="formId"]').first().inputValue()
      const formToken = await second.page.locator('input[name="formToken"]').first().inputValue()
      const answer = await second.page.request.post(`${app.baseUrl}/console/sign-in/second-factor`, {
        form: { formId, formToken, challenge, method: 'code', code: '123456' },
        headers: { origin: app.baseUrl },
      })
      expect(answer.status()).toBe(200)
      expect(await answer.text()).toContain('took longer than 5 minutes or was finished already')
    } finally {
      await first.context.close()
      await second.context.close()
    }
  })
})
