import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../src/access/permissions.js'
import { createTenantAsAdmin, insertMembership, insertUser } from '../helpers/fixtures.js'
import { type InteractiveOp, startInteractiveOp } from '../helpers/oidc-op-pages.js'
import { createTestIdp, type TestIdp } from '../helpers/saml-idp.js'
import { startSamlIdpPages } from '../helpers/saml-idp-pages.js'
import { useSsoBrowserApp } from '../helpers/sso-browser-app.js'

/**
 * Single sign-on as a person lives it (docs/sso.md): in a real Chromium, GET /v1/sso/{id}/login sends the
 * browser to a real identity provider on loopback — a samlify IdP whose page posts the signed SAMLResponse
 * back to the ACS, or oidc-provider with its own login and consent pages — and the service hands over at
 * its default page, /sso/complete, with the token in the URL fragment. That token then works on the API.
 * On failure a screenshot lands in a fresh temp folder, named in the error.
 */
const app = useSsoBrowserApp()
const t = app.t

/** A new tenant with a member whose membership is accepted. */
async function tenantWithMember() {
  const tenant = await createTenantAsAdmin(t)
  const member = await insertUser(t.database.handle.db)
  await insertMembership(t.database.handle.db, {
    tenantId: tenant.id,
    userId: member.id,
    roleId: ROLE_IDS.agent,
    status: 'accepted',
  })
  return { tenant, member }
}

/** Runs `steps` in a fresh browser context; on failure, a screenshot in a temp folder named in the error. */
async function inChromium(name: string, steps: (page: Page) => Promise<void>): Promise<void> {
  const context = await app.browser.newContext()
  const page = await context.newPage()
  try {
    await steps(page)
  } catch (error) {
    const path = join(mkdtempSync(join(tmpdir(), 'tenantry-browser-sso-')), `${name}.png`)
    const shot = await page.screenshot({ path, fullPage: true }).then(
      () => `screenshot: ${path}`,
      (cause) => `no screenshot (${String(cause)})`,
    )
    if (error instanceof Error) error.message += `\n${shot} (page at ${page.url()})`
    throw error
  } finally {
    await context.close()
  }
}

/**
 * Every address the main frame commits to, fragment included: the hand-over page's script takes the
 * token out of the address bar at once, so the test remembers the address as it arrived.
 */
function recordNavigations(page: Page): string[] {
  const urls: string[] = []
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) urls.push(frame.url())
  })
  return urls
}

/** The hand-over as the browser saw it, the page's own confirmation, and the token checked on the API. */
async function expectHandedOver(
  page: Page,
  urls: string[],
  member: { email: string },
  tenant: { id: string; name: string },
) {
  const status = page.getByRole('status')
  await expect.poll(() => status.getAttribute('data-signed-in')).toBe(member.email)
  expect(await status.textContent()).toBe(`Signed in as ${member.email} to ${tenant.name}.`)
  expect(new URL(page.url()).pathname).toBe('/sso/complete')

  const arrival = urls.map((url) => new URL(url)).find((url) => url.hash.includes('token='))
  expect(arrival, `no hand-over with a token among ${urls.join(', ')}`).toBeDefined()
  expect(arrival!.origin + arrival!.pathname).toBe(`${app.baseUrl}/sso/complete`)
  const fragment = new URLSearchParams(arrival!.hash.slice(1))
  const token = fragment.get('token') ?? ''
  expect(token).not.toBe('')
  expect(fragment.get('tenantId')).toBe(tenant.id)
  // The page kept the token for a front end on this origin, and it is the one from the fragment.
  expect(await page.evaluate(() => sessionStorage.getItem('tenantry.token'))).toBe(token)

  const login = await t.request('POST', '/v1/login', { token })
  expect(login.status).toBe(200)
  expect(login.body.result.username).toBe(member.email)
  expect(login.body.result.tenants).toEqual([
    expect.objectContaining({ tenantId: tenant.id, tenantName: tenant.name, roleId: ROLE_IDS.agent }),
  ])
}

describe('single sign-on in Chromium', () => {
  it('SAML 2.0: login → the IdP signs in and posts the signed response to the ACS → the hand-over page', async () => {
    const { tenant, member } = await tenantWithMember()
    const answer: { idp?: TestIdp; spMetadata?: string } = {}
    const pages = await startSamlIdpPages(answer)
    try {
      answer.idp = createTestIdp({ ssoUrl: pages.ssoUrl })
      const created = await t.request('POST', `/v1/tenants/${tenant.id}/identity-providers`, {
        token: await t.adminToken(),
        body: { name: 'Test IdP', identityProvider: 'saml', metadataFile: answer.idp.metadata },
      })
      expect(created.status).toBe(201)
      const providerId: string = created.body.result.id
      answer.spMetadata = (await t.request('GET', `/v1/sso/${providerId}/metadata`)).body
      expect(answer.spMetadata).toContain(`${app.baseUrl}/v1/sso/${providerId}/acs`)

      await inChromium('saml', async (page) => {
        const urls = recordNavigations(page)
        await page.goto(`${app.baseUrl}/v1/sso/${providerId}/login`)
        expect(page.url().startsWith(`${pages.ssoUrl}?SAMLRequest=`)).toBe(true)
        await page.getByLabel('E-mail').fill(member.email)
        await page.getByRole('button', { name: 'Sign in' }).click()
        await page.waitForURL(`${pages.ssoUrl}`)
        const [acs] = await Promise.all([
          page.waitForResponse((response) => response.url() === `${app.baseUrl}/v1/sso/${providerId}/acs`),
          page.getByRole('button', { name: 'Continue' }).click(),
        ])
        expect(acs.status()).toBe(303)
        expect(acs.headers().location?.startsWith(`${app.baseUrl}/sso/complete#token=`)).toBe(true)
        await expectHandedOver(page, urls, member, tenant)
      })
    } finally {
      await pages.close()
    }
  })

  it('OpenID Connect: login → oidc-provider’s login and consent pages → the callback → the hand-over page', async () => {
    const { tenant, member } = await tenantWithMember()
    let op: InteractiveOp | undefined
    try {
      op = await startInteractiveOp()
      const created = await t.request('POST', `/v1/tenants/${tenant.id}/identity-providers`, {
        token: await t.adminToken(),
        body: {
          name: 'Test OP',
          identityProvider: 'oidc',
          issuer: op.issuer,
          clientId: op.clientId,
          clientSecret: op.clientSecret,
        },
      })
      expect(created.status).toBe(201)
      const providerId: string = created.body.result.id
      const redirectUri: string = created.body.result.serviceProvider.redirectUri
      expect(redirectUri).toBe(`${app.baseUrl}/v1/sso/${providerId}/callback`)
      op.register(redirectUri)
      const issuer = op.issuer

      await inChromium('oidc', async (page) => {
        const urls = recordNavigations(page)
        await page.goto(`${app.baseUrl}/v1/sso/${providerId}/login`)
        // oidc-provider's sign-in page: any login, any password; the login is the account's e-mail.
        expect(page.url().startsWith(`${issuer}/interaction/`)).toBe(true)
        await page.locator('input[name="login"]').fill(member.email)
        await page.locator('input[name="password"]').fill('any password at the test OP')
        await page.getByRole('button', { name: 'Sign-in' }).click()
        // Its consent page: this client asks for the e-mail scope.
        await page.waitForURL((url) => url.href.startsWith(`${issuer}/interaction/`))
        await expect.poll(() => page.locator('body').textContent()).toContain('email')
        const [callback] = await Promise.all([
          page.waitForResponse((response) => response.url().startsWith(`${redirectUri}?`)),
          page.getByRole('button', { name: 'Continue' }).click(),
        ])
        expect(callback.status()).toBe(303)
        expect(callback.headers().location?.startsWith(`${app.baseUrl}/sso/complete#token=`)).toBe(true)
        await expectHandedOver(page, urls, member, tenant)
      })
    } finally {
      await op?.close()
    }
  })
})
