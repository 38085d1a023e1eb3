import { describe, expect, it } from 'vitest'
import { checkPage } from '../../helpers/console.js'
import {
  addVirtualAuthenticator,
  enterPassword,
  freshPage,
  heading,
  useConsoleOnLocalhost,
} from '../../helpers/console-mfa.js'
import { insertUser } from '../../helpers/fixtures.js'

/**
 * Passkeys in the console (docs/console.md "Second factors"), made by Chromium's own virtual authenticator
 * (DevTools protocol WebAuthn, a platform authenticator that verifies its user) for the relying party
 * `localhost`: added on the Security page through @simplewebauthn/browser served by the console, then
 * used for the second step of signing in, for a step-up in place, and to sign in alone from the sign-in
 * page — each page axe-clean at both sizes.
 */
const app = useConsoleOnLocalhost()
const t = app.t

describe('passkeys in the console', { timeout: 240_000 }, () => {
  it('adds a passkey, signs in with it after the password and alone, and answers a step-up with it', async () => {
    const person = await insertUser(t.database.handle.db)
    const { context, page, errors } = await freshPage(app.browser)
    try {
      await addVirtualAuthenticator(page)
      await enterPassword(page, app.baseUrl, person.email, person.password)
      await page.getByRole('link', { name: 'Security', exact: true }).click()
      await page.getByRole('button', { name: 'Add a passkey' }).click()
      expect(await heading(page)).toBe('Add a passkey')
      await checkPage(page, 'passkey-add', errors)
      await page.getByLabel('Name (optional)').fill('This laptop')
      await page.getByRole('button', { name: 'Create a passkey' }).click()
      await page.waitForURL(/\/console\/security\?done=passkey-added/)
      expect(await page.getByRole('status').first().textContent()).toContain('The passkey was added')
      const factors = page.getByRole('table', { name: 'Your second factors' })
      expect(await factors.getByRole('row', { name: /This laptop/ }).textContent()).toContain('Passkey')

      // Signing in again: the password, then the passkey (the account's only factor).
      await page.getByRole('button', { name: 'Sign out' }).click()
      await enterPassword(page, app.baseUrl, person.email, person.password)
      expect(await heading(page)).toBe('Check it’s you')
      const usePasskey = page.getByRole('button', { name: 'Use a passkey' })
      expect(await usePasskey.isVisible()).toBe(true)
      await checkPage(page, 'sign-in-passkey', errors)
      await usePasskey.click()
      await page.waitForURL(`${app.baseUrl}/console/tenants`)
      expect(await heading(page)).toBe('Tenants')

      // Eleven minutes on, new recovery codes ask for a step-up: the passkey answers it, and the codes come.
      t.clock.advance(11 * 60_000)
      await page.getByRole('link', { name: 'Security', exact: true }).click()
      await page.getByRole('button', { name: 'Generate new codes' }).click()
      expect(await heading(page)).toBe('Confirm it’s you')
      await checkPage(page, 'step-up-passkey', errors)
      await page.getByRole('button', { name: 'Use a passkey' }).click()
      await page.waitForFunction(
        () => document.querySelector('h1')?.textContent === 'Your new recovery codes',
      )
      expect(await page.locator('ol.codes li').count()).toBe(10)

      // A passkey alone signs in: no e-mail, no password (the passkey names its account).
      await page.getByRole('button', { name: 'Sign out' }).click()
      expect(await page.getByRole('button', { name: 'Sign in with a passkey' }).isVisible()).toBe(true)
      await checkPage(page, 'sign-in-email-passkey', errors)
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click()
      expect(await heading(page)).toBe('Sign in with a passkey')
      await checkPage(page, 'sign-in-passkey-only', errors)
      await page.getByRole('button', { name: 'Use a passkey' }).click()
      await page.waitForURL(`${app.baseUrl}/console/tenants`)
      expect(await page.locator('header .person').textContent()).toBe(person.email)
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })
})
