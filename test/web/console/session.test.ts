import type { BrowserContext, Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { checkPage, expectNoTokenInPage, openPage, signIn } from '../../helpers/console.js'
import { createTenantAsAdmin, insertMembership, insertUser } from '../../helpers/fixtures.js'
import { createTestIdp } from '../../helpers/saml-idp.js'
import { startSamlIdpPages } from '../../helpers/saml-idp-pages.js'
import { useSsoBrowserApp } from '../../helpers/sso-browser-app.js'

/**
 * The console session's life in a real Chromium (docs/console.md): signing in through the tenant's SAML
 * identity provider — e-mail first, the IdP on another origin, back through the SameSite=Strict hand-over
 * page, which finishes only the sign-in this browser started (its nonce, used once) — and the session
 * ending at once when the person's password changes and when the token expires (sign-out and disabling
 * are in tenants.test.ts; attacks on the sign-in in sign-in-security.test.ts). The app listens on a port fixed before it is
 * built, as the SSO return URL must name it; its clock follows the wall clock and can be moved on.
 */
const app = useSsoBrowserApp()
const t = app.t

async function inContext(steps: (page: Page, errors: string[], context: BrowserContext) => Promise<void>) {
  const context = await app.browser.newContext()
  try {
    const { page, errors } = await openPage(context)
    page.setDefaultTimeout(20_000)
    await steps(page, errors, context)
  } finally {
    await context.close()
  }
}

const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent()

describe('the console session in Chromium', { timeout: 180_000 }, () => {
  it("signs in through the tenant's SAML identity provider and lands signed in on the console", async () => {
    const tenant = await createTenantAsAdmin(t)
    const member = await insertUser(t.database.handle.db)
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: member.id,
      roleId: ROLE_IDS.administrator,
      status: 'accepted',
    })
    t.ctx.access.invalidate()
    const answer: Parameters<typeof startSamlIdpPages>[0] = {}
    const idpPages = await startSamlIdpPages(answer)
    try {
      answer.idp = createTestIdp({ ssoUrl: idpPages.ssoUrl })
      const created = await t.request('POST', `/v1/tenants/${tenant.id}/identity-providers`, {
        token: await t.adminToken(),
        body: { name: 'Acme SSO', identityProvider: 'saml', metadataFile: answer.idp.metadata },
      })
      expect(created.status).toBe(201)
      answer.spMetadata = (await t.request('GET', `/v1/sso/${created.body.result.id}/metadata`)).body

      await inContext(async (page, errors, context) => {
        await page.goto(`${app.baseUrl}/console`)
        await page.getByLabel('E-mail').fill(member.email)
        await page.getByRole('button', { name: 'Continue' }).click()
        const provider = page.getByRole('link', { name: 'Sign in with Acme SSO' })
        expect(await provider.count()).toBe(1)
        await checkPage(page, 'sign-in-sso', errors)
        await provider.click()
        // The identity provider's own page, on another origin; this browser holds the sign-in's nonce.
        await page.waitForURL((url) => url.href.startsWith(`${idpPages.ssoUrl}?SAMLRequest=`))
        const nonce = async () => (await context.cookies()).filter((c) => c.name === 'tenantry_console_sso')
        expect(await nonce()).toEqual([expect.objectContaining({ httpOnly: true, sameSite: 'Lax' })])
        await page.getByLabel('E-mail').fill(member.email)
        await page.getByRole('button', { name: 'Sign in' }).click()
        await page.waitForURL(idpPages.ssoUrl)
        await page.getByRole('button', { name: 'Continue' }).click()
        // The ACS sends the browser to /console/sso, whose script hands the token over on this site; the
        // nonce it was checked against is used up.
        await page.waitForURL(`${app.baseUrl}/console/tenants`)
        expect(await nonce()).toEqual([])
        expect(await heading(page)).toBe('Tenants')
        expect(await page.getByRole('link', { name: tenant.name }).count()).toBe(1)
        const [cookie] = (await context.cookies()).filter((c) => c.name === 'tenantry_console')
        expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' })
        await expectNoTokenInPage(page)
        expect(page.url()).not.toContain('token=')
        expect(errors, JSON.stringify(errors)).toEqual([])
      })
    } finally {
      await idpPages.close()
    }
  })

  it('ends at once when the person changes their password', async () => {
    const person = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
    await inContext(async (page) => {
      await signIn(page, app.baseUrl, person.email, person.password)
      expect(await heading(page)).toBe('Tenants')
      const own = await t.tokenFor(person.email, person.password)
      // The change must postdate the session's token (issued times have second precision).
      t.clock.advance(2000)
      const changed = await t.request('PUT', `/v1/users/${person.id}`, {
        token: own,
        body: { password: 'a brand new passphrase', currentPassword: person.password },
      })
      expect(changed.status, JSON.stringify(changed.body)).toBe(200)
      await page.goto(`${app.baseUrl}/console/users`)
      expect(await heading(page)).toBe('Sign in')
      // Signing in again takes the new password.
      await signIn(page, app.baseUrl, person.email, 'a brand new passphrase')
      expect(await heading(page)).toBe('Tenants')
    })
  })

  // Last: the clock moves half a day on, past every token issued before.
  it('ends when its token expires (12 hours)', async () => {
    const person = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
    await inContext(async (page, _errors, context) => {
      await signIn(page, app.baseUrl, person.email, person.password)
      await page.goto(`${app.baseUrl}/console/users`)
      expect(await heading(page)).toBe('Users')
      t.clock.advance(11 * 3600_000)
      await page.goto(`${app.baseUrl}/console/users`)
      expect(await heading(page)).toBe('Users')
      t.clock.advance(3600_000 + 1000)
      await page.goto(`${app.baseUrl}/console/users`)
      expect(await heading(page)).toBe('Sign in')
      expect((await context.cookies()).filter((c) => c.name === 'tenantry_console' && c.value)).toEqual([])
    })
  })
})
