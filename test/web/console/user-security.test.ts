import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { checkPage } from '../../helpers/console.js'
import {
  enrolTotpOverHttp,
  enterPassword,
  freshPage,
  heading,
  nextCode,
  useConsoleOnLocalhost,
} from '../../helpers/console-mfa.js'
import { insertUser } from '../../helpers/fixtures.js'

/**
 * "Reset second factors" and "Sign out everywhere" on a platform user's page (docs/console.md "Users"),
 * each after a confirmation page, and step-up in place (docs/console.md "Step-up"): an administrator with
 * an authenticator app, whose second factor is older than 10 minutes, resets someone's factors — the
 * API asks for a step-up, the console asks for the code on the page (a wrong one first) and then carries
 * on with the reset, landing on the user's page with its notice.
 */
const app = useConsoleOnLocalhost()
const t = app.t

describe('a platform user’s second factors and sessions', { timeout: 240_000 }, () => {
  it('resets their factors after a step-up in place, and signs them out everywhere', async () => {
    const admin = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
    const { secret } = await enrolTotpOverHttp(t, await t.tokenFor(admin.email, admin.password))
    const person = await insertUser(t.database.handle.db)
    await enrolTotpOverHttp(t, await t.tokenFor(person.email, person.password))

    const { context, page, errors } = await freshPage(app.browser)
    try {
      await enterPassword(page, app.baseUrl, admin.email, admin.password)
      await page.getByLabel('Code from your authenticator app').fill(nextCode(t, secret))
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.waitForURL(`${app.baseUrl}/console/tenants`)
      // The second factor of the sign-in grows old: a reset now needs a fresh one.
      t.clock.advance(11 * 60_000)

      await page.goto(`${app.baseUrl}/console/users/${person.id}`)
      await page.getByRole('link', { name: 'Reset second factors…' }).click()
      expect(await heading(page)).toBe(`Reset second factors: ${person.email}`)
      await checkPage(page, 'user-reset-factors', errors)
      await page.getByRole('button', { name: 'Reset second factors' }).click()

      // Step-up in place: the code asked for here, a wrong one first; then the reset carries on.
      expect(await heading(page)).toBe('Confirm it’s you')
      expect(new URL(page.url()).pathname).toBe(`/console/users/${person.id}/reset-factors`)
      await page.getByLabel('Code from your authenticator app').fill('000000')
      await page.getByRole('button', { name: 'Continue' }).click()
      expect(await page.getByRole('alert').textContent()).toContain('Code is not right')
      await checkPage(page, 'user-step-up-error', errors)
      await page.getByLabel('Code from your authenticator app').fill(nextCode(t, secret))
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.waitForURL(`${app.baseUrl}/console/users/${person.id}?done=factors-reset`)
      expect(await page.getByRole('status').first().textContent()).toContain(
        'Their second factors and recovery codes are removed',
      )
      await checkPage(page, 'user-factors-reset', errors)
      // Their password alone signs them in again: no factor is left.
      const token = await t.tokenFor(person.email, person.password)
      expect((await t.request('GET', '/v1/me/factors', { token })).body.result).toEqual([])

      // Sign out everywhere: the confirmation, then every session of theirs ends.
      await page.getByRole('link', { name: 'Sign out everywhere…' }).click()
      expect(await heading(page)).toBe(`Sign out everywhere: ${person.email}`)
      await checkPage(page, 'user-sign-out-everywhere', errors)
      await page.getByRole('button', { name: 'Sign out everywhere' }).click()
      expect(await page.getByRole('status').first().textContent()).toContain('They are signed out everywhere')
      expect((await t.request('GET', '/v1/me/sessions', { token })).status).toBe(401)

      // One's own page offers neither: one's own factors and sessions are on the Security page.
      await page.goto(`${app.baseUrl}/console/users/${admin.id}`)
      expect(await page.getByRole('link', { name: 'Reset second factors…' }).count()).toBe(0)
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })
})
