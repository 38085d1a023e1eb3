import { inflateRawSync } from 'node:zlib'
import type { BrowserContext, Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { openPage, signIn } from '../../helpers/console.js'
import {
  createTenantAsAdmin,
  type FixtureUser,
  insertMembership,
  insertUser,
} from '../../helpers/fixtures.js'
import { createTestIdp, type TestIdp } from '../../helpers/saml-idp.js'
import { useSsoBrowserApp } from '../../helpers/sso-browser-app.js'

/**
 * The console's sign-in under attack, in a real Chromium (docs/console.md "Sign in", "CSRF"): each test
 * performs the attack the way an outsider would and checks what the person would see. Login CSRF through
 * the single sign-on landing page — a link carrying someone else's token must not replace a signed-in
 * person's session —, a password token passed off as a hand-over, a pre-sign-in form token replayed from
 * another browser, and a `next` that climbs out of /console.
 */
const app = useSsoBrowserApp()
const t = app.t

async function inContext(steps: (page: Page, context: BrowserContext) => Promise<void>) {
  const context = await app.browser.newContext()
  try {
    const { page } = await openPage(context)
    page.setDefaultTimeout(20_000)
    await steps(page, context)
  } finally {
    await context.close()
  }
}

const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent()

/** A tenant whose SAML identity provider (a samlify IdP, answered in code) signs its members in. */
async function tenantWithSso(...members: FixtureUser[]) {
  const tenant = await createTenantAsAdmin(t)
  for (const member of members)
    await insertMembership(t.database.handle.db, {
      tenantId: tenant.id,
      userId: member.id,
      roleId: ROLE_IDS.administrator,
      status: 'accepted',
    })
  t.ctx.access.invalidate()
  const idp: TestIdp = createTestIdp()
  const created = await t.request('POST', `/v1/tenants/${tenant.id}/identity-providers`, {
    token: await t.adminToken(),
    body: { name: 'Acme SSO', identityProvider: 'saml', metadataFile: idp.metadata },
  })
  expect(created.status).toBe(201)
  const providerId: string = created.body.result.id
  const spMetadata: string = (await t.request('GET', `/v1/sso/${providerId}/metadata`)).body
  return { tenant, providerId, idp, spMetadata }
}

/** A real hand-over token for `email`, won through the provider as anyone can win their own. */
async function ssoTokenOf(sso: Awaited<ReturnType<typeof tenantWithSso>>, email: string): Promise<string> {
  const start = await t.request('GET', `/v1/sso/${sso.providerId}/login`)
  const request = new URL(String(start.headers.location)).searchParams.get('SAMLRequest') ?? ''
  const requestId = /ID="([^"]+)"/.exec(inflateRawSync(Buffer.from(request, 'base64')).toString())?.[1]
  const answer = await sso.idp.respond(sso.spMetadata, email, { InResponseTo: requestId ?? '' })
  const acs = await t.request('POST', `/v1/sso/${sso.providerId}/acs`, {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ SAMLResponse: answer }).toString(),
  })
  expect(acs.status).toBe(303)
  return new URLSearchParams(new URL(String(acs.headers.location)).hash.slice(1)).get('token') ?? ''
}

/**
 * In this browser: e-mail first, then "Sign in with Acme SSO" — its first hop only, which sets this
 * browser's nonce. Answers the console page the provider's answer will be handed to
 * (`…/console/sso?attempt=…`).
 */
async function startSsoSignIn(page: Page, email: string): Promise<string> {
  await page.goto(`${app.baseUrl}/console/sign-in`)
  await page.getByLabel('E-mail').fill(email)
  await page.getByRole('button', { name: 'Continue' }).click()
  const href = await page.getByRole('link', { name: 'Sign in with Acme SSO' }).getAttribute('href')
  const started = await page.request.get(`${app.baseUrl}${href}`, { maxRedirects: 0 })
  expect(started.status()).toBe(303)
  const login = new URL(started.headers().location ?? '', app.baseUrl)
  return login.searchParams.get('returnTo') ?? ''
}

/** Where the landing page's script ends: refused, or (were the hand-over accepted) the tenants. */
async function settled(page: Page): Promise<string | null> {
  const end = page.getByRole('heading', { level: 1, name: /^(This sign-in was not finished|Tenants)$/ })
  await end.waitFor()
  return end.textContent()
}

async function expectRefusedHandOver(page: Page, reason: string) {
  expect(await settled(page)).toBe('This sign-in was not finished')
  expect(await page.getByRole('alert').textContent()).toContain(reason)
}

describe('login CSRF through /console/sso', { timeout: 180_000 }, () => {
  it("a link carrying someone else's token leaves a signed-in administrator's session as it was", async () => {
    const admin = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
    const attacker = await insertUser(t.database.handle.db)
    const sso = await tenantWithSso(attacker, admin)
    // The attacker's own tokens: one from POST /v1/tokens with their password, one from their own SSO
    // sign-in, and the landing address of a sign-in they started in their own browser.
    const passwordToken = await t.tokenFor(attacker.email, attacker.password)
    const ssoToken = await ssoTokenOf(sso, attacker.email)
    let attackersLanding = ''
    await inContext(async (page) => {
      attackersLanding = await startSsoSignIn(page, attacker.email)
    })

    await inContext(async (page) => {
      await signIn(page, app.baseUrl, admin.email, admin.password)
      expect(await page.locator('.person').textContent()).toBe(admin.email)
      const links = [
        `${app.baseUrl}/console/sso#token=${passwordToken}&ttl=604800`,
        `${app.baseUrl}/console/sso#token=${ssoToken}&ttl=604800`,
        `${attackersLanding}#token=${ssoToken}&ttl=604800`,
      ]
      const openAndSettle = async (link: string) => {
        await page.goto(link)
        await settled(page)
        await page.goto(`${app.baseUrl}/console/tenants`)
        expect([link, await page.locator('.person').textContent()]).toEqual([link, admin.email])
      }
      for (const link of links) await openAndSettle(link)
      // Even while this browser has a sign-in of its own under way, the attacker's is not that one.
      await startSsoSignIn(page, admin.email)
      await openAndSettle(`${attackersLanding}#token=${ssoToken}`)
    })
  })

  it('a token won with a password is refused at /console/sso, even for a sign-in this browser started', async () => {
    const member = await insertUser(t.database.handle.db)
    const sso = await tenantWithSso(member)
    await inContext(async (page, context) => {
      const landing = await startSsoSignIn(page, member.email)
      const [nonce] = (await context.cookies()).filter((c) => c.name === 'tenantry_console_sso')
      expect(nonce).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/console/sso', secure: false })
      expect(nonce!.expires - Date.now() / 1000).toBeGreaterThan(500)
      expect(nonce!.expires - Date.now() / 1000).toBeLessThanOrEqual(600)

      const passwordToken = await t.tokenFor(member.email, member.password)
      await page.goto(`${landing}#token=${passwordToken}`)
      await expectRefusedHandOver(page, 'Only a sign-in through your organisation’s identity provider')
      await page.goto(`${app.baseUrl}/console/tenants`)
      expect(await heading(page)).toBe('Sign in')

      // The same person's hand-over token, for a sign-in this browser started, is what signs in.
      const next = await startSsoSignIn(page, member.email)
      const ssoToken = await ssoTokenOf(sso, member.email)
      await page.goto(`${next}#token=${ssoToken}`)
      await page.waitForURL(`${app.baseUrl}/console/tenants`)
      expect(await page.locator('.person').textContent()).toBe(member.email)
      expect((await context.cookies()).filter((c) => c.name === 'tenantry_console_sso')).toEqual([])
      // Used once: the same landing again finishes nothing.
      await page.goto(`${next}#token=${ssoToken}`)
      await expectRefusedHandOver(page, 'It was not started from this browser')
    })
  })
})

describe('the sign-in form before sign-in', { timeout: 180_000 }, () => {
  it('refuses a form token drawn in another browser', async () => {
    const member = await insertUser(t.database.handle.db)
    const other = await app.browser.newContext()
    try {
      const { page: theirs } = await openPage(other)
      await theirs.goto(`${app.baseUrl}/console/sign-in`)
      const [browserCookie] = (await other.cookies()).filter((c) => c.name === 'tenantry_console_browser')
      expect(browserCookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/console' })
      const fields = await theirs
        .locator('form[action="/console/sign-in"]')
        .evaluate(
          (f) => Object.fromEntries(new FormData(f as HTMLFormElement) as never) as Record<string, string>,
        )
      const post = (page: Page) =>
        page.request.post(`${app.baseUrl}/console/sign-in`, {
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.baseUrl },
          data: new URLSearchParams({ ...fields, email: member.email }).toString(),
          maxRedirects: 0,
        })
      await inContext(async (page) => {
        await page.goto(`${app.baseUrl}/console/sign-in`)
        const replayed = await post(page)
        expect(replayed.status()).toBe(403)
        expect(await replayed.text()).toContain('This form could not be accepted')
      })
      // In the browser it was drawn in, the same form goes on to the password step.
      const own = await post(theirs)
      expect(own.status()).toBe(200)
      expect(await own.text()).toContain(`Signing in as <strong>${member.email}</strong>`)
    } finally {
      await other.close()
    }
  })

  it('keeps `next` inside /console: dot segments, encoded or not, backslashes and other hosts', async () => {
    const person = await insertUser(t.database.handle.db, { roleId: ROLE_IDS.platformAdministrator })
    const hostile = [
      '/console/../../v1/users',
      '/console/%2e%2e/%2e%2e/v1/users',
      '/console/.%2E/v1/users',
      '/console/..%2f..%2fv1/users',
      '/console/%252e%252e/v1/users',
      '/console\\..\\..\\v1\\users',
      '//evil.example/console',
      '/\\evil.example/console',
    ]
    await inContext(async (page) => {
      for (const next of hostile) {
        await page.goto(`${app.baseUrl}/console/sign-in?next=${encodeURIComponent(next)}`)
        await page.getByLabel('E-mail').fill(person.email)
        await page.getByRole('button', { name: 'Continue' }).click()
        await page.getByLabel('Password').fill(person.password)
        await page.getByRole('button', { name: 'Sign in', exact: true }).click()
        await page.waitForLoadState()
        expect([next, page.url()]).toEqual([next, `${app.baseUrl}/console/tenants`])
        expect(await heading(page)).toBe('Tenants')
      }
      // A console page asked for is where the person lands.
      await page.goto(`${app.baseUrl}/console/sign-in?next=${encodeURIComponent('/console/users?q=ana')}`)
      await page.getByLabel('E-mail').fill(person.email)
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.getByLabel('Password').fill(person.password)
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await page.waitForURL(`${app.baseUrl}/console/users?q=ana`)
    })
  })
})
