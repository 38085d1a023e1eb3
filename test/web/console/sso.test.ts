import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { checkPage } from '../../helpers/console.js'
import { htmlOf, useAdminConsole } from '../../helpers/console-admin.js'
import { createTenantAsAdmin, insertMembership, insertUser } from '../../helpers/fixtures.js'
import { startInteractiveOp } from '../../helpers/oidc-op-pages.js'
import { createTestIdp, type TestIdp } from '../../helpers/saml-idp.js'
import { startSamlIdpPages } from '../../helpers/saml-idp-pages.js'
import { TEST_ADMIN } from '../../helpers/test-env.js'

/**
 * The identity-provider pages in a real Chromium (docs/console-admin.md "Identity providers"), against real
 * providers on loopback: SAML added by metadata URL and by an uploaded file, OpenID Connect by issuer; the
 * service provider's URLs to copy; a test sign-in through each whose page reports the asserted e-mail
 * without signing anyone in; the password policy page saying first how many members would lose password
 * sign-in.
 */
const c = useAdminConsole({ sso: true })

async function tenantWithMembers(count: number) {
  const tenant = await createTenantAsAdmin(c.t)
  const members = []
  for (let i = 0; i < count; i++) {
    const member = await insertUser(c.t.database.handle.db)
    await insertMembership(c.t.database.handle.db, {
      tenantId: tenant.id,
      userId: member.id,
      roleId: ROLE_IDS.agent,
      status: 'accepted',
    })
    members.push(member)
  }
  return { tenant, members }
}

/**
 * The console's test sign-in: start it, follow its link to the provider, `atProvider` there — and the
 * provider's answer ends back on the console's own test page, which reports it.
 */
async function testSignIn(
  page: Page,
  providerName: string,
  atProvider: () => Promise<void>,
): Promise<string> {
  await page.getByRole('button', { name: 'Test sign-in' }).click()
  await page.getByRole('heading', { name: `Test sign-in at ${providerName}` }).waitFor()
  const testPage = page.url()
  await checkPage(page, 'idp-test-pending', c.errors)
  await page.getByRole('link', { name: `Sign in at ${providerName}` }).click()
  await atProvider()
  await page.waitForURL(testPage)
  await page.getByRole('heading', { name: 'Test sign-in result' }).waitFor()
  // Still signed in: the session cookie came along.
  expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(1)
  // The pages on the way were the provider's and the API's, not the console's (their missing favicons
  // are no error here).
  c.errors.length = 0
  return testPage
}

async function samlAtProvider(page: Page, email: string) {
  await page.getByLabel('E-mail').fill(email)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('button', { name: 'Continue' }).click()
}

describe('identity-provider pages', () => {
  it('SAML by metadata URL and by uploaded file: URLs to copy, a test sign-in reporting the e-mail', async () => {
    const { page, baseUrl, errors } = c
    const { tenant, members } = await tenantWithMembers(1)
    const answer: { idp?: TestIdp; spMetadata?: string } = {}
    const idpPages = await startSamlIdpPages(answer)
    const folder = mkdtempSync(join(tmpdir(), 'console-sso-'))
    try {
      // The IdP on another site (localhost, the console on 127.0.0.1): its answer arrives as that site's
      // navigation, without the console's SameSite=Strict session cookie, and must still end signed in.
      answer.idp = createTestIdp({ ssoUrl: idpPages.ssoUrl.replace('//127.0.0.1:', '//localhost:') })
      await page.goto(`${baseUrl}/console/tenants/${tenant.id}`)
      await page.getByRole('link', { name: 'Identity providers' }).click()
      await checkPage(page, 'idps-empty', errors)
      await page.getByRole('link', { name: 'New SAML provider' }).click()
      await checkPage(page, 'idp-new-saml', errors)
      await page.getByLabel('Name', { exact: true }).fill('Corporate SAML')
      await page.getByLabel('Metadata URL').fill(idpPages.metadataUrl)
      await page.getByRole('button', { name: 'Add identity provider' }).click()
      await page.getByRole('heading', { name: 'Corporate SAML' }).waitFor()
      const id = page.url().split('/identity-providers/')[1]!.split('?')[0]!
      expect(await page.getByLabel('ACS URL (assertion consumer service)').inputValue()).toBe(
        `${baseUrl}/v1/sso/${id}/acs`,
      )
      const metadataUrl = await page.getByLabel('Service provider metadata URL').inputValue()
      expect(metadataUrl).toBe(`${baseUrl}/v1/sso/${id}/metadata`)
      await checkPage(page, 'idp-saml', errors)
      answer.spMetadata = await (await page.request.get(metadataUrl)).text()

      await testSignIn(page, 'Corporate SAML', () => samlAtProvider(page, members[0]!.email))
      expect(await page.getByRole('status').textContent()).toContain('a real sign-in would work')
      expect(await page.locator('dl.summary').first().textContent()).toContain(`E-mail${members[0]!.email}`)
      await checkPage(page, 'idp-test-result', errors)

      // A test started through the API alone (no returnTo) ends on the service's own result page, in the
      // page kit's frame (docs/pages.md): it passes the same checks.
      const admin = await c.t.tokenFor(TEST_ADMIN.email, TEST_ADMIN.password)
      const started = await c.t.request('POST', `/v1/tenants/${tenant.id}/identity-providers/${id}/test`, {
        token: admin,
      })
      await page.goto(started.body.result.url)
      await samlAtProvider(page, members[0]!.email)
      await page.getByRole('heading', { name: 'Test sign-in result' }).waitFor()
      expect(page.url()).toBe(`${baseUrl}/v1/sso/${id}/acs`)
      expect(await page.title()).toBe('Test sign-in result · Tenantry')
      expect(await page.getByRole('status').textContent()).toContain('a real sign-in would work')
      errors.length = 0 // the provider's pages on the way are not the service's
      await checkPage(page, 'sso-test-result', errors)

      // The same provider's metadata as a file, uploaded.
      const file = join(folder, 'idp-metadata.xml')
      writeFileSync(file, answer.idp.metadata)
      await page.goto(`${baseUrl}/console/tenants/${tenant.id}/identity-providers/new?protocol=saml`)
      await page.getByLabel('Name', { exact: true }).fill('Uploaded SAML')
      await page.getByLabel('Metadata file').setInputFiles(file)
      await page.getByRole('button', { name: 'Add identity provider' }).click()
      await page.getByRole('heading', { name: 'Uploaded SAML' }).waitFor()
      expect(await page.locator('dl.summary').textContent()).toContain('From an uploaded file')
      const uploaded = await page.getByLabel('Service provider metadata URL').inputValue()
      answer.spMetadata = await (await page.request.get(uploaded)).text()
      await testSignIn(page, 'Uploaded SAML', () => samlAtProvider(page, 'stranger@elsewhere.example'))
      expect(await page.locator('dl.summary').first().textContent()).toContain(
        'E-mailstranger@elsewhere.example',
      )
      expect(await page.getByRole('status').textContent()).toContain('a real sign-in would be refused')

      // Nobody was signed in by either test: no token or session was handed out.
      expect(page.url().startsWith(`${baseUrl}/console/`)).toBe(true)
      await page.goto(`${baseUrl}/console/tenants/${tenant.id}/identity-providers`)
      expect(await page.getByRole('row').count()).toBe(3)
      await checkPage(page, 'idps', errors)
    } finally {
      await idpPages.close()
      rmSync(folder, { recursive: true, force: true })
    }
  }, 300_000)

  it('OpenID Connect by issuer: the client secret write-only, a test sign-in reporting the e-mail', async () => {
    const { page, baseUrl, errors } = c
    const { tenant, members } = await tenantWithMembers(1)
    const op = await startInteractiveOp()
    try {
      await page.goto(`${baseUrl}/console/tenants/${tenant.id}/identity-providers`)
      await page.getByRole('link', { name: 'New OpenID Connect provider' }).click()
      await page.getByLabel('Name', { exact: true }).fill('Test OP')
      await page.getByLabel('Issuer').fill(op.issuer)
      await page.getByLabel('Client ID').fill(op.clientId)
      await page.getByLabel('Client secret').fill(op.clientSecret)
      await checkPage(page, 'idp-new-oidc', errors)
      await page.getByRole('button', { name: 'Add identity provider' }).click()
      await page.getByRole('heading', { name: 'Test OP' }).waitFor()
      const providerUrl = page.url().split('?')[0]!
      op.register(await page.getByLabel('Redirect URI').inputValue())
      expect(await page.locator('dl.summary').textContent()).toContain('Client secretset')
      await checkPage(page, 'idp-oidc', errors)

      await testSignIn(page, 'Test OP', async () => {
        await page.locator('input[name="login"]').fill(members[0]!.email)
        await page.locator('input[name="password"]').fill('any password at the test OP')
        await page.getByRole('button', { name: 'Sign-in' }).click()
        await page.getByRole('button', { name: 'Continue' }).click()
      })
      expect(await page.locator('dl.summary').first().textContent()).toContain(`E-mail${members[0]!.email}`)
      expect(await page.getByRole('status').textContent()).toContain('a real sign-in would work')

      for (const url of [providerUrl, `${providerUrl}/edit`, page.url()]) {
        expect(await htmlOf(page, url)).not.toContain(op.clientSecret)
      }
      await page.goto(`${providerUrl}/edit`)
      expect(await page.getByLabel('Client secret').inputValue()).toBe('')
      await checkPage(page, 'idp-edit', errors)

      // Its History: the audit list filtered to this provider.
      await page.goto(providerUrl)
      await page.getByRole('link', { name: 'History', exact: true }).click()
      const id = providerUrl.split('/').pop()!
      expect(new URL(page.url()).searchParams.get('targetId')).toBe(id)
      const targets = await page.locator('td[data-label="Target"] code').allTextContents()
      expect(new Set(targets)).toEqual(new Set([id]))
      expect(await page.getByRole('cell', { name: 'identity_provider.created' }).count()).toBe(1)
      expect(await page.getByRole('cell', { name: 'identity_provider.test_started' }).count()).toBe(1)
    } finally {
      await op.close()
    }
  }, 300_000)

  it('the password policy page says first how many members would lose password sign-in', async () => {
    const { page, baseUrl, t, errors } = c
    const { tenant } = await tenantWithMembers(2)
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}`)
    await page.getByRole('link', { name: 'Password policy' }).click()
    await page.getByLabel('New password policy').selectOption('disabled')
    await page.getByRole('button', { name: 'Check the effect' }).click()
    // Both accepted members use their password now; under "identity providers only" neither may.
    expect(await page.locator('#impact').textContent()).toContain(
      '2 members would lose password sign-in (of 2 members; 2 may use their password now)',
    )
    const before = await t.request('GET', `/v1/tenants/${tenant.id}`, { token: await t.adminToken() })
    expect(before.body.result.cxengageIdentityProvider).toBe('enabled')
    await checkPage(page, 'password-policy-impact', errors)
    await page.getByRole('button', { name: /^Change to/ }).click()
    await page.getByRole('status').filter({ hasText: 'The password policy was changed.' }).waitFor()
    const after = await t.request('GET', `/v1/tenants/${tenant.id}`, { token: await t.adminToken() })
    expect(after.body.result.cxengageIdentityProvider).toBe('disabled')
    await checkPage(page, 'password-policy', errors)
  }, 300_000)
})
