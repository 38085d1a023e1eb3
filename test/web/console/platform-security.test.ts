import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { checkPage } from '../../helpers/console.js'
import {
  enrolTotpOverHttp,
  enterPassword,
  freshPage,
  heading,
  nextCode,
  tokenWithCode,
  useConsoleOnLocalhost,
} from '../../helpers/console-mfa.js'
import { insertUser } from '../../helpers/fixtures.js'

/**
 * The platform's own second-factor setting in the console (docs/console.md "Security"), in Chromium: a
 * Platform Administrator with an authenticator app finds it from their Security page, requires a second
 * factor for platform roles, and — eleven minutes later, their factor no longer fresh — makes it optional
 * again after a step-up asked for in place.
 */
const app = useConsoleOnLocalhost()
const t = app.t

describe('platform security', { timeout: 180_000 }, () => {
  it('requires a second factor for platform roles, and back after a step-up', async () => {
    const admin = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
    const { secret } = await enrolTotpOverHttp(t, await t.tokenFor(admin.email, admin.password))
    const { context, page, errors } = await freshPage(app.browser)
    try {
      await enterPassword(page, app.baseUrl, admin.email, admin.password)
      await page.getByLabel('Code from your authenticator app').fill(nextCode(t, secret))
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.waitForURL(`${app.baseUrl}/console/tenants`)
      await page.getByRole('link', { name: 'Security', exact: true }).click()
      await page.getByRole('link', { name: 'Platform security' }).click()
      expect(await heading(page)).toBe('Platform security')
      await checkPage(page, 'platform-security', errors)

      await page.getByLabel('Second factor for platform roles').selectOption('required')
      await page.getByRole('button', { name: 'Save' }).click()
      expect(await page.getByRole('status').first().textContent()).toContain('was saved')
      // Read as the administrator with a second factor: a token without one no longer holds platform rights.
      const token = await tokenWithCode(t, admin.email, admin.password, secret)
      const read = async () => (await t.request('GET', '/v1/platform/security', { token })).body.result
      expect(await read()).toEqual({ mfaForPlatformRoles: 'required' })

      t.clock.advance(11 * 60_000)
      await page.getByLabel('Second factor for platform roles').selectOption('optional')
      await page.getByRole('button', { name: 'Save' }).click()
      expect(await heading(page)).toBe('Confirm it’s you')
      await page.getByLabel('Code from your authenticator app').fill(nextCode(t, secret))
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.waitForURL(`${app.baseUrl}/console/security/platform?done=saved`)
      expect(await page.locator('main').textContent()).toContain('Now: Optional')
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })
})
