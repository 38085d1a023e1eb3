import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ConsoleInBrowser, checkPage, openPage, startConsoleInBrowser } from '../../helpers/console.js'

/**
 * An address under /console that no page takes (docs/console.md "Inputs and refusals"): the console's own
 * "Page not found" in its frame, 404, with a way to the console's start — for a person signed in and one
 * who is not — never the API's JSON; the API's own unknown addresses keep their JSON 404.
 */
let c: ConsoleInBrowser

beforeAll(async () => {
  c = await startConsoleInBrowser(['withJs'])
}, 300_000)
afterAll(async () => {
  await c?.close()
})

describe('an unknown console address', { timeout: 120_000 }, () => {
  it('is the Page not found page in the console frame, and its link leads to the console', async () => {
    const { page, errors } = await openPage(c.withJs, true)
    const response = await page.goto(`${c.baseUrl}/console/tenants/no/such/page?x=1`)
    expect(response?.status()).toBe(404)
    expect(response?.headers()['content-type']).toContain('text/html')
    expect(await page.title()).toBe('Page not found · Tenantry console')
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Page not found')
    await checkPage(page, 'page-not-found', errors)

    await page.getByRole('link', { name: 'Go to the start of the console' }).click()
    await page.waitForLoadState()
    expect(new URL(page.url()).pathname).toBe('/console/tenants')
    await page.close()
  })

  it('is the same page for a person not signed in, whose way on is signing in', async () => {
    const context = await c.browser.newContext()
    const { page, errors } = await openPage(context, true)
    const response = await page.goto(`${c.baseUrl}/console/nothing-here`)
    expect(response?.status()).toBe(404)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Page not found')
    await checkPage(page, 'page-not-found-signed-out', errors)
    await page.getByRole('link', { name: 'Go to the start of the console' }).click()
    await page.waitForLoadState()
    expect(new URL(page.url()).pathname).toBe('/console/sign-in')
    await context.close()
  })

  it('asked with a method a console page does not take, is a 405 page naming the ones it does', async () => {
    const answer = await c.withJs.request.delete(`${c.baseUrl}/console/tenants`, { maxRedirects: 0 })
    expect(answer.status()).toBe(405)
    expect(answer.headers().allow).toBe('GET, HEAD, POST')
    expect(answer.headers()['content-type']).toContain('text/html')
    expect(await answer.text()).toContain('This page does not take a DELETE request.')
  })

  it('leaves the API its own JSON 404', async () => {
    const answer = await c.withJs.request.get(`${c.baseUrl}/v1/no-such-thing`)
    expect(answer.status()).toBe(404)
    expect((await answer.json()).error.reason).toBe('not_found')
  })
})
