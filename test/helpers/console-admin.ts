import type { AddressInfo } from 'node:net'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'
import { launchBrowser } from './browser.js'
import { signIn } from './console.js'
import { freePort } from './free-port.js'
import { createTestApp, FollowingClock, type TestApp } from './test-app.js'
import { TEST_ADMIN } from './test-env.js'

/**
 * The console's administration pages (docs/console-admin.md) in a real Chromium: the app listening on
 * loopback (outbound http to loopback allowed, for a webhook receiver there), a browser with JavaScript on,
 * the Platform Administrator signed in through the forms, and every page's checks at 1280×800 and
 * 390×844 — axe-core (WCAG 2.2 AA tags) 0 violations, no sideways scrolling at 390 px, no browser console
 * error — with a screenshot of each in test-output/.
 */
export interface AdminConsole {
  t: TestApp
  baseUrl: string
  browser: Browser
  context: BrowserContext
  page: Page
  errors: string[]
  close(): Promise<void>
}

/**
 * A file's admin console: started before its tests (startAdminConsole), closed after them. The object
 * returned is filled in when the file starts, so tests read its fields inside their bodies.
 */
export function useAdminConsole(options: { sso?: boolean } = {}): AdminConsole {
  const c = {} as AdminConsole
  beforeAll(async () => {
    Object.assign(c, await startAdminConsole(options))
  }, 300_000)
  afterAll(async () => {
    await c.close?.()
  })
  return c
}

/**
 * `sso`: the public URL is the loopback address the app listens on (identity providers on loopback send
 * the browser back there) and the clock follows real time (their assertions carry real timestamps).
 */
export async function startAdminConsole(options: { sso?: boolean } = {}): Promise<AdminConsole> {
  const port = options.sso ? await freePort() : 0
  const t = await createTestApp({
    env: {
      TENANTRY_OUTBOUND_ALLOW_HTTP: 'true',
      TENANTRY_OUTBOUND_ALLOW_PRIVATE: 'true',
      ...(options.sso ? { TENANTRY_PUBLIC_URL: `http://127.0.0.1:${port}` } : {}),
    },
    ...(options.sso ? { clock: new FollowingClock() } : {}),
  })
  await t.app.listen({ port, host: '127.0.0.1' })
  const baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
  const browser = await launchBrowser()
  const context = await browser.newContext()
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  const errors: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text())
  })
  page.on('pageerror', (error) => errors.push(error.message))
  await signIn(page, baseUrl, TEST_ADMIN.email, TEST_ADMIN.password)
  await page.waitForURL(/\/console\/tenants$/)
  return {
    t,
    baseUrl,
    browser,
    context,
    page,
    errors,
    close: async () => {
      await context.close()
      await browser.close()
      await t.close()
    },
  }
}

/** The HTML of every console page visited after `from` in this test, fetched again as the browser would. */
export async function htmlOf(page: Page, url: string): Promise<string> {
  const response = await page.request.get(url)
  return response.text()
}
