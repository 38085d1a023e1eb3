import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { type ConsoleInBrowser, checkPage, openPage, startConsoleInBrowser } from '../../helpers/console.js'
import { freshTenant, insertUser, uniqueEmail } from '../../helpers/fixtures.js'
import type { TestSmtpServer } from '../../helpers/smtp.js'
import type { TestApp } from '../../helpers/test-app.js'
import { TEST_ADMIN } from '../../helpers/test-env.js'

/**
 * The platform users pages of the console (docs/console.md), in a real Chromium: search, create, edit, a
 * password-reset link arriving at a real SMTP server, disable and enable, erase with the typed
 * confirmation, and a stale edit — the forms with JavaScript off, the page checks with it on.
 */
let pages: ConsoleInBrowser
let t: TestApp
let smtp: TestSmtpServer
let baseUrl: string
let withJs: BrowserContext

beforeAll(async () => {
  pages = await startConsoleInBrowser(['withJs', 'withoutJs'])
  ;({ t, baseUrl, smtp, withJs } = pages)
})
afterAll(async () => pages?.close())

const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent()
const summaryValue = (page: Page, term: string) =>
  page.locator('dl.summary dt', { hasText: term }).locator('xpath=following-sibling::dd[1]').textContent()

async function readUser(id: string) {
  return t.request('GET', `/v1/users/${id}`, { token: await t.adminToken() })
}

describe('platform users in the console', { timeout: 180_000 }, () => {
  it('searches by e-mail or name, and creates a user (errors beside the fields first)', async () => {
    const { page, errors } = await openPage(withJs)
    const marker = `zq${Date.now().toString(36)}`
    const email = uniqueEmail(marker)
    await page.goto(`${baseUrl}/console/tenants`)
    await page.getByRole('link', { name: 'Users', exact: true }).click()
    expect(await heading(page)).toBe('Users')
    await checkPage(page, 'users', errors)

    await page.getByRole('link', { name: 'New user' }).click()
    await checkPage(page, 'user-new', errors)
    await page.getByLabel('E-mail').fill('not-an-address')
    await page.getByRole('button', { name: 'Create user' }).click()
    expect(await page.getByRole('alert').textContent()).toContain('E-mail')
    expect(await page.getByLabel('E-mail').getAttribute('aria-invalid')).toBe('true')
    expect(await page.evaluate(() => document.activeElement?.hasAttribute('data-error-summary'))).toBe(true)
    await checkPage(page, 'user-new-error', errors)
    await page.getByLabel('E-mail').fill(email)
    await page.getByLabel('First name').fill('Zed')
    await page.getByLabel('Last name').fill(`Quist ${marker}`)
    await page.getByRole('button', { name: 'Create user' }).click()
    expect(await heading(page)).toBe(`Zed Quist ${marker}`)
    expect(await summaryValue(page, 'E-mail')).toBe(email)

    // Search finds them by part of the name, and by the e-mail; nobody else matches the marker.
    await page.getByRole('link', { name: 'Users', exact: true }).first().click()
    await page.getByLabel('Search by e-mail or name').fill(`quist ${marker}`)
    await page.getByRole('button', { name: 'Search' }).click()
    expect(await page.getByRole('row').count()).toBe(2)
    expect(await page.getByRole('row', { name: new RegExp(marker) }).textContent()).toContain(email)
    await checkPage(page, 'users-search', errors)
    await page.getByLabel('Search by e-mail or name').fill(`${marker}-nobody`)
    await page.getByRole('button', { name: 'Search' }).click()
    expect(await page.getByText('No users match.').count()).toBe(1)
    await page.close()
  })

  it('edits, sends a password-reset link, disables and enables, with JavaScript off', async () => {
    const person = await insertUser(t.database.handle.db)
    const { page } = await openPage(pages.context)
    await page.goto(`${baseUrl}/console/users?q=${encodeURIComponent(person.email)}`)
    await page.getByRole('link', { name: person.email }).click()
    expect(await heading(page)).toBe(person.email)

    await page.getByLabel('First name').fill('Ada')
    await page.getByLabel('Last name').fill('Lovelace')
    await page.getByRole('button', { name: 'Save changes' }).click()
    expect(await heading(page)).toBe('Ada Lovelace')
    expect((await readUser(person.id)).body.result).toMatchObject({ firstName: 'Ada', lastName: 'Lovelace' })

    await page.getByRole('button', { name: 'Send a password-reset link' }).click()
    expect(await summaryValue(page, 'Password-reset link')).toMatch(
      /^live until \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
    )
    const [mail] = await smtp.waitForMailTo(person.email, 1)
    expect(mail!.text).toContain('/password-reset?token=')

    await page.getByRole('button', { name: 'Disable' }).click()
    expect(await summaryValue(page, 'Status')).toBe('disabled')
    expect((await readUser(person.id)).body.result.status).toBe('disabled')
    await page.getByRole('button', { name: 'Enable' }).click()
    expect(await summaryValue(page, 'Status')).toBe('enabled')
    expect((await readUser(person.id)).body.result.status).toBe('enabled')
    await page.close()
  })

  it('a stale edit shows "changed meanwhile" and overwrites nothing', async () => {
    const person = await insertUser(t.database.handle.db)
    const { page, errors } = await openPage(withJs)
    await page.goto(`${baseUrl}/console/users/${person.id}`)
    await checkPage(page, 'user', errors)
    const meanwhile = await t.request('PUT', `/v1/users/${person.id}`, {
      token: await t.adminToken(),
      body: { firstName: 'Theirs' },
    })
    expect(meanwhile.status).toBe(200)
    await page.getByLabel('First name').fill('Mine')
    await page.getByRole('button', { name: 'Save changes' }).click()
    expect(await heading(page)).toBe('This user was changed meanwhile')
    await checkPage(page, 'user-changed-meanwhile', errors)
    expect((await readUser(person.id)).body.result.firstName).toBe('Theirs')
    await page.getByRole('link', { name: 'Open the user again' }).click()
    expect(await page.getByLabel('First name').inputValue()).toBe('Theirs')
    await page.close()
  })

  it('erases only after the e-mail is typed: the page says what goes; a wrong e-mail is refused', async () => {
    const { tenant, admin } = await freshTenant(t)
    const { page, errors } = await openPage(withJs)
    await page.goto(`${baseUrl}/console/users/${admin.id}`)
    await page.getByRole('link', { name: 'Erase…' }).click()
    expect(await heading(page)).toBe(`Erase ${admin.email}`)
    const notice = (await page.locator('.notice.warning').textContent()) ?? ''
    for (const part of ['every membership', 'API keys', 'password', 'audit events', 'cannot be undone'])
      expect(notice).toContain(part)
    expect(await page.getByText(`Type ${admin.email} to confirm`).count()).toBe(1)
    await checkPage(page, 'user-erase', errors)

    await page.getByLabel('E-mail').fill(TEST_ADMIN.email)
    await page.getByRole('button', { name: 'Erase this person' }).click()
    expect(await page.getByRole('alert').textContent()).toContain('E-mail does not match')
    await checkPage(page, 'user-erase-error', errors)
    expect((await readUser(admin.id)).body.result.email).toBe(admin.email)

    await page.getByLabel('E-mail').fill(admin.email.toUpperCase())
    await page.getByRole('button', { name: 'Erase this person' }).click()
    expect(await heading(page)).toBe('Erased')
    expect(await page.getByRole('status').textContent()).toBe('The person is erased.')
    await checkPage(page, 'user-erased', errors)
    const after = await readUser(admin.id)
    expect(after.body.result?.email ?? '').not.toBe(admin.email)
    const members = await t.request('GET', `/v1/tenants/${tenant.id}/users`, { token: await t.adminToken() })
    expect(members.body.result.map((m: { userId: string }) => m.userId)).not.toContain(admin.id)
    await page.close()
  })

  it('names every person on the list, whatever the record holds: an erased person, no names, invisible names', async () => {
    const admin = await t.adminToken()
    const create = async (names: { firstName?: string; lastName?: string }) => {
      const email = uniqueEmail('nameless')
      const created = await t.request('POST', '/v1/users', {
        token: admin,
        body: { email, roleId: ROLE_IDS.platformUser, ...names },
      })
      expect(created.status).toBe(201)
      return { id: created.body.result.id as string, email }
    }
    const erased = await create({ firstName: 'Soon', lastName: 'Gone' })
    expect((await t.request('DELETE', `/v1/users/${erased.id}`, { token: admin })).status).toBe(204)
    const unnamed = [
      await create({}),
      await create({ firstName: '   ', lastName: ' ' }),
      await create({ firstName: '\u200B', lastName: '\u2060\u200B' }),
      await create({ firstName: '\u3164', lastName: '\uFEFF' }),
    ]

    const { page, errors } = await openPage(withJs)
    await page.goto(`${baseUrl}/console/users`)
    const linkTo = (id: string) => page.locator(`a[href="/console/users/${id}"]`)
    // The erased person keeps only an id and a status: the link says what the record is.
    expect(await linkTo(erased.id).textContent()).toBe('Erased person')
    const erasedLinks = page.getByRole('link', { name: 'Erased person', exact: true })
    expect(await erasedLinks.evaluateAll((links) => links.map((a) => a.getAttribute('href')))).toContain(
      `/console/users/${erased.id}`,
    )
    // Without a name a person can read, the link is their e-mail.
    for (const person of unnamed) {
      const link = page.getByRole('link', { name: person.email, exact: true })
      expect(await link.count(), person.email).toBe(1)
      expect(await link.getAttribute('href'), person.email).toBe(`/console/users/${person.id}`)
    }
    await checkPage(page, 'users-unnamed', errors)

    await linkTo(erased.id).click()
    expect(await heading(page)).toBe('Erased person')
    await page.goto(`${baseUrl}/console/users/${unnamed[2]!.id}`)
    expect(await heading(page)).toBe(unnamed[2]!.email)
    await page.close()
  })

  it('erases with JavaScript off too', async () => {
    const person = await insertUser(t.database.handle.db)
    const { page } = await openPage(pages.context)
    await page.goto(`${baseUrl}/console/users/${person.id}/erase`)
    await page.getByRole('button', { name: 'Erase this person' }).click()
    expect(await page.getByRole('alert').textContent()).toContain('E-mail is required to confirm')
    await page.getByLabel('E-mail').fill(person.email)
    await page.getByRole('button', { name: 'Erase this person' }).click()
    expect(await heading(page)).toBe('Erased')
    const taken = await t.request('GET', `/v1/users?email=${encodeURIComponent(person.email)}`, {
      token: await t.adminToken(),
    })
    expect(taken.status).toBe(404)
    await page.close()
  })
})
