import type { BrowserContext } from 'playwright-core'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../src/access/permissions.js'
import { type PagesInBrowser, startPagesInBrowser } from '../helpers/browser.js'
import { checkPageAtBothSizes, openPage } from '../helpers/console.js'
import { REGION_ID, uniqueEmail, uniqueName } from '../helpers/fixtures.js'
import { invitationLinkIn, type TestSmtpServer } from '../helpers/smtp.js'
import type { TestApp } from '../helpers/test-app.js'
import { TEST_ADMIN } from '../helpers/test-env.js'

/**
 * The whole invitation as a person lives it: the mail arrives at a real SMTP server, its link opens in a
 * real Chromium on the service listening on a real port, the person chooses a password and accepts —
 * with JavaScript turned off, since the page is a plain form — and can then log in and see the tenant.
 * Screenshots land in test-output/.
 */
let t: TestApp
let smtp: TestSmtpServer
let context: BrowserContext
let baseUrl: string
let token: string
let tenant: { id: string; name: string }

let pages: PagesInBrowser
let withJs: BrowserContext

beforeAll(async () => {
  pages = await startPagesInBrowser()
  ;({ t, smtp, baseUrl, context } = pages)
  // The pages run no script; axe-core, which does, checks their HTML in a context with JavaScript on.
  withJs = await context.browser()!.newContext()
})
afterAll(async () => {
  await withJs?.close()
  await pages?.close()
})
beforeEach(async () => {
  t.clock.set(new Date(Math.max(Date.now(), t.clock.now().getTime())))
  token = await t.tokenFor(TEST_ADMIN.email, TEST_ADMIN.password)
  if (!tenant) {
    const created = await t.request('POST', '/v1/tenants', {
      token,
      body: { name: uniqueName('Northwind Support'), regionId: REGION_ID },
    })
    tenant = created.body.result
  }
})

/** A platform user with no password yet, invited with `invited`; returns it and its mail's link. */
async function invitedUser(roleId: string = ROLE_IDS.supervisor) {
  const email = uniqueEmail('browser')
  const created = await t.request('POST', '/v1/users', {
    token,
    body: { email, roleId: ROLE_IDS.platformUser },
  })
  expect(created.status).toBe(201)
  const invited = await t.request('POST', `/v1/tenants/${tenant.id}/users`, {
    token,
    body: { email, roleId, status: 'invited' },
  })
  expect(invited.status).toBe(201)
  const [mail] = await smtp.waitForMailTo(email, 1)
  return { id: created.body.result.id as string, email, mail: mail! }
}

describe('the acceptance page in Chromium', () => {
  it('opens the link from the e-mail, sets a password, accepts; the user then logs in and sees the tenant', async () => {
    const user = await invitedUser()
    expect(user.mail.envelopeTo).toEqual([user.email])
    expect(user.mail.text).toContain(tenant.name)
    expect(user.mail.text).toContain('Supervisor')
    const { link } = invitationLinkIn(user.mail)
    expect(link.origin).toBe(baseUrl)

    const { page, errors } = await openPage(context, true)
    const opened = await page.goto(link.href)
    expect(opened?.status()).toBe(200)
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain(tenant.name)
    expect(await page.locator('#tenant-name').textContent()).toBe(tenant.name)
    expect(await page.locator('#role-name').textContent()).toBe('Supervisor')
    expect(await page.locator('#email').textContent()).toBe(user.email)

    // Fields are found by their labels, as assistive technology finds them.
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery')
    await page.getByLabel('Repeat the password').fill('correct horse batterie')
    await page.getByLabel('First name').fill('Katherine')
    await page.getByLabel('Last name').fill('Johnson')
    await checkPageAtBothSizes(page, 'invitation-form', errors, withJs)
    // Enter in a field submits the form: no mouse, no script.
    await page.getByLabel('Last name').press('Enter')
    await page.waitForLoadState()

    // The mismatch is announced and shown beside its field; the names are kept.
    const alert = page.getByRole('alert')
    expect(await alert.textContent()).toContain('Repeat the password does not match the password')
    expect(await page.getByLabel('Repeat the password').getAttribute('aria-invalid')).toBe('true')
    expect(await page.getByLabel('First name').inputValue()).toBe('Katherine')
    expect(await page.title()).toMatch(/^Error: Join /)
    await checkPageAtBothSizes(page, 'invitation-form-error', errors, withJs)

    await page.getByLabel('Password', { exact: true }).fill('correct horse battery')
    await page.getByLabel('Repeat the password').fill('correct horse battery')
    await page.getByRole('button', { name: 'Accept the invitation' }).click()
    await page.waitForLoadState()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`You have joined ${tenant.name}`)
    expect(await page.getByRole('status').textContent()).toContain('Supervisor')
    expect(await page.title()).toBe(`Welcome to ${tenant.name} · Tenantry`)
    await checkPageAtBothSizes(page, 'invitation-accepted', errors, withJs)

    const session = await t.request('POST', '/v1/tokens', {
      body: { username: user.email, password: 'correct horse battery' },
    })
    expect(session.status).toBe(200)
    const login = await t.request('POST', '/v1/login', { token: session.body.token })
    expect(login.body.result).toMatchObject({
      username: user.email,
      firstName: 'Katherine',
      lastName: 'Johnson',
    })
    expect(login.body.result.tenants).toEqual([
      {
        tenantId: tenant.id,
        tenantName: tenant.name,
        tenantActive: true,
        roleId: ROLE_IDS.supervisor,
        roleName: 'Supervisor',
        tenantPermissions: [
          'VIEW_ALL_USERS',
          'MANAGE_ALL_USERS',
          'MANAGE_TENANT_ENROLLMENT',
          'VIEW_ALL_PROVIDERS',
          'VIEW_ALL_ROLES',
        ],
        password: true,
        ssoRequired: false,
        mfaRequired: false,
        mfaDeadline: null,
      },
    ])

    // The link worked once.
    const again = await page.goto(link.href)
    expect(again?.status()).toBe(404)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      'This invitation has already been accepted',
    )
    await page.close()
  }, 120_000)

  it('says the link expired after 24 h + 1 s; the link of a resend works', async () => {
    const user = await invitedUser(ROLE_IDS.agent)
    const { link: first } = invitationLinkIn(user.mail)
    t.clock.advance(86_400_000 + 1000)
    token = await t.tokenFor(TEST_ADMIN.email, TEST_ADMIN.password)

    const { page, errors } = await openPage(context, true)
    const expired = await page.goto(first.href)
    expect(expired?.status()).toBe(410)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('This invitation has expired')
    expect(await page.getByRole('alert').textContent()).toContain('Invitation links work for 24 hours')
    await checkPageAtBothSizes(page, 'invitation-expired', errors, withJs)

    const resent = await t.request('PUT', `/v1/tenants/${tenant.id}/users/${user.id}`, {
      token,
      body: { status: 'invited' },
    })
    expect(resent.status).toBe(200)
    const mails = await smtp.waitForMailTo(user.email, 2)
    const { link: second } = invitationLinkIn(mails[1]!)
    expect(second.href).not.toBe(first.href)

    expect((await page.goto(first.href))?.status()).toBe(404)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      'This invitation link is not valid',
    )
    await checkPageAtBothSizes(page, 'invitation-invalid', errors, withJs)

    expect((await page.goto(second.href))?.status()).toBe(200)
    await page.getByLabel('Password', { exact: true }).fill('a brand new password')
    await page.getByLabel('Repeat the password').fill('a brand new password')
    await page.getByRole('button', { name: 'Accept the invitation' }).click()
    await page.waitForLoadState()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`You have joined ${tenant.name}`)
    const record = await t.request('GET', `/v1/tenants/${tenant.id}/users/${user.id}`, { token })
    expect(record.body.result).toMatchObject({ status: 'accepted', invitationStatus: 'enabled' })
    await page.close()
  }, 120_000)
})
