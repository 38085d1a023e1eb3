import { describe, expect, it } from 'vitest'
import { checkPage, signIn } from '../../helpers/console.js'
import { enrolTotpOverHttp, freshPage, heading, useConsoleOnLocalhost } from '../../helpers/console-mfa.js'
import { createTenantAsAdmin, freshTenant, memberWithToken } from '../../helpers/fixtures.js'
import { TEST_ADMIN } from '../../helpers/test-env.js'

/**
 * A tenant's security settings in the console (docs/console.md "Tenant security"), in Chromium: the page
 * says first how many members have no second factor and lists them with their deadlines
 * (`?mfa=false`); the policy, grace days and trust in the identity provider are saved through the
 * tenant's PUT (a wrong number of days beside its field first), after which the deadlines show; a
 * sub-tenant shows the policy it inherits. The platform administrator here has no factor: no step-up.
 */
const app = useConsoleOnLocalhost()
const t = app.t

describe('a tenant’s security settings', { timeout: 180_000 }, () => {
  it('counts and lists the members without a factor, and saves the policy', async () => {
    const { tenant, admin } = await freshTenant(t)
    const other = await memberWithToken(t, tenant.id)
    const secured = await memberWithToken(t, tenant.id)
    await enrolTotpOverHttp(t, secured.token)
    const child = await createTenantAsAdmin(t, { parentId: tenant.id })

    const { context, page, errors } = await freshPage(app.browser)
    try {
      await signIn(page, app.baseUrl, TEST_ADMIN.email, TEST_ADMIN.password)
      await page.goto(`${app.baseUrl}/console/tenants/${tenant.id}`)
      await page.getByRole('link', { name: 'Security settings' }).click()
      expect(await heading(page)).toBe(`Security settings of ${tenant.name}`)
      expect(await page.locator('#without-factor').textContent()).toContain(
        '2 members have no second factor.',
      )
      const list = page.getByRole('table', { name: 'Members without a second factor' })
      expect(await list.getByRole('row').count()).toBe(3)
      for (const email of [admin.email, other.email]) {
        expect(
          await list.getByRole('row', { name: new RegExp(email.replace(/\./g, '\\.')) }).textContent(),
        ).toContain('None while the policy is optional')
      }
      expect(await list.getByText(secured.email).count()).toBe(0)
      await checkPage(page, 'tenant-security', errors)

      // A number of days out of range is refused beside its field; nothing is saved.
      await page.getByLabel('Second factor', { exact: true }).selectOption('required')
      await page.getByLabel('Grace days').fill('120')
      await page.getByRole('button', { name: 'Save the settings' }).click()
      expect(await page.getByRole('alert').textContent()).toContain(
        'Grace days must be a whole number of days from 0 to 90',
      )
      expect(await page.getByLabel('Grace days').getAttribute('aria-invalid')).toBe('true')
      await checkPage(page, 'tenant-security-error', errors)

      await page.getByLabel('Grace days').fill('0')
      await page.getByLabel('Identity provider').selectOption('asserted')
      await page.getByRole('button', { name: 'Save the settings' }).click()
      expect(await page.getByRole('status').first().textContent()).toContain(
        'The security settings were saved.',
      )
      const read = await t.request('GET', `/v1/tenants/${tenant.id}`, { token: await t.adminToken() })
      expect(read.body.result).toMatchObject({
        mfaPolicy: 'required',
        mfaGraceDays: 0,
        mfaAcceptIdp: 'asserted',
      })
      expect(await page.locator('dl.summary').textContent()).toContain('Second factor required')
      expect(await list.getByText('Passed: refused now').count()).toBe(2)
      await checkPage(page, 'tenant-security-required', errors)

      // The sub-tenant's page: the policy it inherits, from its parent.
      await page.goto(`${app.baseUrl}/console/tenants/${child.id}/security`)
      expect(await page.locator('dl.summary').textContent()).toContain('set by a parent tenant')
      expect(errors).toEqual([])
    } finally {
      await context.close()
    }
  })
})
