import { describe, expect, it } from 'vitest'
import {
  checkPageWithoutJs,
  enterPassword,
  freshPage,
  heading,
  nextCode,
  tokenWithCode,
  useConsoleOnLocalhost,
} from '../../helpers/console-mfa.js'
import { insertUser } from '../../helpers/fixtures.js'

/**
 * A person's own "Security" page (docs/console.md "Security"), in Chromium with JavaScript off — the
 * authenticator app's whole path works without it: the QR code (an image with a name) and the key to
 * type, a wrong code beside its field, the right one (computed here from the key shown); recovery codes
 * shown once with a download, asked after a step-up in place (the account has a factor now, the session
 * was won with a password alone); the sessions, one signed out and then every other; a factor removed
 * after its confirmation page. axe-core checks each page's HTML in a context with JavaScript on.
 */
const app = useConsoleOnLocalhost()
const t = app.t

describe('the Security page', { timeout: 240_000 }, () => {
  it('adds an authenticator app, makes recovery codes after a step-up, and signs sessions out', async () => {
    const person = await insertUser(t.database.handle.db)
    const { context, page, errors } = await freshPage(app.browser, false)
    const withJs = await app.browser.newContext()
    const check = (name: string) => checkPageWithoutJs(page, name, errors, withJs, app.baseUrl)
    try {
      await enterPassword(page, app.baseUrl, person.email, person.password)
      await page.getByRole('link', { name: 'Security', exact: true }).click()
      expect(await heading(page)).toBe('Security')
      expect(await page.getByText('Your account has no second factor').isVisible()).toBe(true)
      // No JavaScript: the passkey's button stays hidden, and the page says a passkey needs it.
      expect(await page.getByRole('button', { name: 'Add a passkey' }).isVisible()).toBe(false)
      // (Playwright's text queries skip <noscript>: the note is found by its element.)
      const note = page.locator('noscript p')
      expect(await note.isVisible()).toBe(true)
      expect(await note.textContent()).toContain('Adding a passkey needs JavaScript')
      expect(await page.getByRole('table', { name: 'Your sessions' }).getByRole('row').count()).toBe(2)
      await check('security')

      // An authenticator app: the QR code and the key, then a code from it.
      await page.getByLabel('Name (optional)').fill('Work phone')
      await page.getByRole('button', { name: 'Add an authenticator app' }).click()
      expect(await heading(page)).toBe('Add an authenticator app')
      const qr = page.getByRole('img', { name: 'QR code to scan with your authenticator app' })
      expect(await qr.isVisible()).toBe(true)
      expect(await qr.locator('svg path').count()).toBeGreaterThan(0)
      const secret = ((await page.locator('#secret-key').textContent()) ?? '').replace(/\s/g, '')
      expect(secret).toMatch(/^[A-Z2-7]{16,}$/)
      await check('security-totp')
      await page.getByLabel('Code', { exact: true }).fill('000000')
      await page.getByRole('button', { name: 'Confirm' }).click()
      expect(await page.getByRole('alert').textContent()).toContain('Code is not right')
      expect(await page.getByLabel('Code', { exact: true }).getAttribute('aria-invalid')).toBe('true')
      expect(await page.getByRole('img', { name: /QR code/ }).isVisible()).toBe(true)
      await check('security-totp-error')
      await page.getByLabel('Code', { exact: true }).fill(nextCode(t, secret))
      await page.getByRole('button', { name: 'Confirm' }).click()
      expect(await heading(page)).toBe('Security')
      expect(await page.getByRole('status').first().textContent()).toContain(
        'The authenticator app was added',
      )
      const factors = page.getByRole('table', { name: 'Your second factors' })
      expect(await factors.getByRole('row', { name: /Work phone/ }).textContent()).toContain(
        'Authenticator app',
      )

      // New recovery codes: a step-up operation, asked for on the page, which then carries on.
      await page.getByRole('button', { name: 'Generate new codes' }).click()
      expect(await heading(page)).toBe('Confirm it’s you')
      await check('step-up')
      await page.getByLabel('Code from your authenticator app').fill('000000')
      await page.getByRole('button', { name: 'Continue' }).click()
      expect(await heading(page)).toBe('Confirm it’s you')
      expect(await page.getByRole('alert').textContent()).toContain('Code is not right')
      await check('step-up-error')
      await page.getByLabel('Code from your authenticator app').fill(nextCode(t, secret))
      await page.getByRole('button', { name: 'Continue' }).click()
      expect(await heading(page)).toBe('Your new recovery codes')
      const codes = (await page.locator('ol.codes li').allTextContents()).map((c) => c.trim())
      expect(codes).toHaveLength(10)
      const download = page.getByRole('link', { name: 'Download the codes' })
      expect(await download.getAttribute('download')).toBe('tenantry-recovery-codes.txt')
      const href = (await download.getAttribute('href')) ?? ''
      expect(href.startsWith('data:text/plain;charset=utf-8,')).toBe(true)
      const text = decodeURIComponent(href.slice('data:text/plain;charset=utf-8,'.length))
      for (const code of codes) expect(text).toContain(code)
      await check('security-recovery-codes')
      await page.getByRole('link', { name: 'I have saved them' }).click()
      expect(await page.getByText('10 codes left').count()).toBe(1)

      // Sessions: another sign-in of the person, signed out from here; then every other at once.
      const elsewhere = await tokenWithCode(t, person.email, person.password, secret)
      await page.reload()
      const sessions = page.getByRole('table', { name: 'Your sessions' })
      expect(await sessions.getByRole('row').count()).toBe(3)
      expect(await sessions.getByText('This session').count()).toBe(1)
      await check('security-sessions')
      await sessions.getByRole('button', { name: 'Sign out' }).click()
      expect(await page.getByRole('status').first().textContent()).toContain('That session is signed out')
      expect((await t.request('GET', '/v1/me/sessions', { token: elsewhere })).status).toBe(401)
      const others = [
        await tokenWithCode(t, person.email, person.password, secret),
        await tokenWithCode(t, person.email, person.password, secret),
      ]
      await page.reload()
      await page.getByRole('button', { name: 'Sign out everywhere else' }).click()
      expect(await page.getByRole('status').first().textContent()).toContain(
        'Every other session is signed out',
      )
      for (const token of others)
        expect((await t.request('GET', '/v1/me/sessions', { token })).status).toBe(401)
      expect(await page.getByRole('table', { name: 'Your sessions' }).getByRole('row').count()).toBe(2)

      // Removing the app: a confirmation page first (the step-up above is still fresh).
      await page.getByRole('link', { name: 'Remove Work phone' }).click()
      expect(await heading(page)).toBe('Remove Work phone')
      await check('security-remove-factor')
      await page.getByRole('button', { name: 'Remove this factor' }).click()
      expect(await page.getByRole('status').first().textContent()).toContain('The factor was removed')
      expect(await page.getByText('Your account has no second factor').isVisible()).toBe(true)
      expect(errors).toEqual([])
    } finally {
      await withJs.close()
      await context.close()
    }
  })
})
