import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ConsoleInBrowser, checkPage, openPage, startConsoleInBrowser } from '../../helpers/console.js'
import { insertUser, uniqueEmail } from '../../helpers/fixtures.js'
import type { TestApp } from '../../helpers/test-app.js'

/**
 * The CSV import of platform users in the console (docs/console.md), in a real Chromium: the rows are checked
 * first — a result per row, the failing field named, nothing written — then Import writes them and shows
 * the final result per row; by pasting (JavaScript on) and by uploading a file (JavaScript off).
 */
let pages: ConsoleInBrowser
let t: TestApp
let baseUrl: string
let withJs: BrowserContext

beforeAll(async () => {
  pages = await startConsoleInBrowser(['withJs', 'withoutJs'])
  ;({ t, baseUrl, withJs } = pages)
})
afterAll(async () => pages?.close())

async function userByEmail(email: string) {
  const found = await t.request('GET', `/v1/users?email=${encodeURIComponent(email)}`, {
    token: await t.adminToken(),
  })
  // An exact e-mail that matches nobody is 404 user_not_found.
  if (found.status === 404) return undefined
  expect(found.status).toBe(200)
  return found.body.result[0] as { firstName: string; lastName: string; status: string } | undefined
}

const row = (page: Page, text: string) =>
  page.getByRole('row', { name: new RegExp(text.replace(/\./g, '\\.')) })

describe('the CSV import in the console', { timeout: 180_000 }, () => {
  it('checks pasted rows (a result per row, nothing written), then imports them and shows each result', async () => {
    const taken = (await insertUser(t.database.handle.db)).email
    const [ann, cy] = [uniqueEmail('ann'), uniqueEmail('cy')]
    const { page, errors } = await openPage(withJs)
    await page.goto(`${baseUrl}/console/users`)
    await page.getByRole('link', { name: 'Import users' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Import users')
    await checkPage(page, 'users-import', errors)

    await page
      .getByLabel('CSV', { exact: true })
      .fill(
        [
          'E-mail,First name,Last name,Shoe size',
          `${ann},Ann,Lee,44`,
          'not-an-address,Bo,Ng,41',
          `${taken},Taken,Already,40`,
          `${cy},Cy,"Quoted, Name",39`,
        ].join('\n'),
      )
    await page.getByRole('button', { name: 'Check the rows' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Check the rows')
    expect(await page.getByRole('status').textContent()).toContain(
      '4 rows: 2 would be created, 2 have a problem. Nothing has been written yet.',
    )
    expect(await row(page, ann).textContent()).toContain('Would be created')
    expect(await row(page, cy).textContent()).toContain('Would be created')
    // The failing field is named as the file names it, with the reason.
    expect(await row(page, 'not-an-address').textContent()).toMatch(/Not created\s*E-mail: .+/)
    expect(await row(page, taken).textContent()).toMatch(/Not created\s*.*(taken|exists)/i)
    expect(await page.getByText('These columns name no field and were left out: Shoe size.').count()).toBe(1)
    await checkPage(page, 'users-import-check', errors)
    // The check wrote nothing.
    expect(await userByEmail(ann)).toBeUndefined()
    expect(await userByEmail(cy)).toBeUndefined()

    await page.getByRole('button', { name: 'Import 2 users' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Import done')
    expect(await page.getByRole('status').textContent()).toContain(
      '2 users created, 2 rows not created, of 4 rows.',
    )
    expect(await row(page, ann).textContent()).toContain('Created')
    expect(await row(page, 'not-an-address').textContent()).toContain('Not created')
    await checkPage(page, 'users-import-done', errors)
    expect(await userByEmail(ann)).toMatchObject({ firstName: 'Ann', lastName: 'Lee' })
    expect(await userByEmail(cy)).toMatchObject({ firstName: 'Cy', lastName: 'Quoted, Name' })
    await row(page, ann).getByRole('link', { name: 'Open' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Ann Lee')
    await page.close()
  })

  it('imports an uploaded file with JavaScript off; a double submit of Import shows the first result', async () => {
    const dee = uniqueEmail('dee')
    const { page } = await openPage(pages.context)
    await page.goto(`${baseUrl}/console/users/import`)
    await page.getByLabel('CSV file').setInputFiles({
      name: 'people.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(`\uFEFFemail,firstName,status\r\n${dee},Dee,disabled\r\n`),
    })
    await page.getByRole('button', { name: 'Check the rows' }).click()
    expect(await page.getByRole('status').textContent()).toContain('1 row: 1 would be created')
    // The rows checked are shown for changing, whether pasted or uploaded.
    expect(await page.getByLabel('CSV', { exact: true }).inputValue()).toContain(`${dee},Dee,disabled`)
    expect(await userByEmail(dee)).toBeUndefined()

    const importForm = page.locator('form', { has: page.getByRole('button', { name: 'Import 1 user' }) })
    const fields = await importForm.evaluate((f) => [...new FormData(f as HTMLFormElement).entries()])
    await page.getByRole('button', { name: 'Import 1 user' }).click()
    expect(await page.getByRole('status').textContent()).toContain('1 user created, 0 rows not created')
    expect(await userByEmail(dee)).toMatchObject({ firstName: 'Dee', status: 'disabled' })

    // The same form sent again (a double click without JavaScript): its Idempotency-Key replays the answer.
    const again = await page.request.post(`${baseUrl}/console/users/import`, {
      headers: { origin: baseUrl },
      multipart: Object.fromEntries(fields as [string, string][]),
    })
    expect(again.status()).toBe(200)
    const text = await again.text()
    expect(text).toContain('1 user created, 0 rows not created')
    expect(text).not.toMatch(/taken|exists/i)
    await page.close()
  })

  it('says what is wrong with a CSV it cannot take: unreadable, empty, too many rows', async () => {
    const { page, errors } = await openPage(withJs)
    await page.goto(`${baseUrl}/console/users/import`)
    const csv = page.getByLabel('CSV', { exact: true })
    await csv.fill('email,firstName\n"unclosed@example.test,Ann\n')
    await page.getByRole('button', { name: 'Check the rows' }).click()
    expect(await page.getByRole('alert').textContent()).toContain('CSV could not be read: Quote Not Closed')
    expect(await csv.getAttribute('aria-invalid')).toBe('true')
    await checkPage(page, 'users-import-error', errors)

    await csv.fill('email,firstName\n')
    await page.getByRole('button', { name: 'Check the rows' }).click()
    expect(await page.getByRole('alert').textContent()).toContain('CSV has no rows under its header line')

    const many = ['email', ...Array.from({ length: 1001 }, (_, i) => `many.${i}@example.test`)].join('\n')
    await csv.fill(many)
    await page.getByRole('button', { name: 'Check the rows' }).click()
    expect(await page.getByRole('alert').textContent()).toContain(
      'CSV has 1,001 rows; the console imports at most 1,000 at a time',
    )
    expect(await userByEmail('many.0@example.test')).toBeUndefined()

    // The multipart form is held to the same CSRF checks: without its token, an import changes nothing.
    const forged = uniqueEmail('forged')
    const refused = await page.request.post(`${baseUrl}/console/users/import`, {
      headers: { origin: baseUrl },
      multipart: { step: 'import', csv: `email\n${forged}\n`, formId: 'A'.repeat(24), formToken: 'x' },
    })
    expect(refused.status()).toBe(403)
    expect(await refused.text()).toContain('Nothing was changed')
    expect(await userByEmail(forged)).toBeUndefined()

    // A body over the upload bound is a 413, and a body that is not multipart a 400 — never a 5xx.
    const huge = await page.request.post(`${baseUrl}/console/users/import`, {
      headers: { origin: baseUrl },
      multipart: {
        step: 'check',
        csv: { name: 'big.csv', mimeType: 'text/csv', buffer: Buffer.alloc(1100 * 1024, 'a') },
      },
    })
    expect(huge.status()).toBe(413)
    const broken = await page.request.post(`${baseUrl}/console/users/import`, {
      headers: { origin: baseUrl, 'content-type': 'multipart/form-data; boundary=nope' },
      data: '--nope\r\ncontent-disposition: form-data; name="csv"\r\n\r\nunterminated',
    })
    expect(broken.status()).toBe(400)
    await page.close()
  })
})
