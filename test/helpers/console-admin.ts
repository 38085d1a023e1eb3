import type { AddressInfo } from 'node:net'
import AxeBuilder from '@axe-core/playwright'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { expect } from 'vitest'
import { launchBrowser, outputPath } from './browser.js'
import { createTestApp, type TestApp } from './test-app.js'
import { TEST_ADMIN } from './test-env.js'

/**
 * The console's administration pages (API.md §17, part 2) in a real Chromium: the app listening on
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

export async function startAdminConsole(): Promise<AdminConsole> {
  const t = await createTestApp({
    env: { TENANTRY_OUTBOUND_ALLOW_HTTP: 'true', TENANTRY_OUTBOUND_ALLOW_PRIVATE: 'true' },
  })
  await t.app.listen({ port: 0, host: '127.0.0.1' })
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
  await page.goto(`${baseUrl}/console`)
  await page.getByLabel('E-mail').fill(TEST_ADMIN.email)
  await page.getByRole('button', { name: 'Continue' }).click()
  await page.getByLabel('Password').fill(TEST_ADMIN.password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
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

const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const

/** Every page check of section 17 at both sizes; `name` names the screenshots. */
export async function checkAdminPage(page: Page, name: string, errors: string[]): Promise<void> {
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize({ width: viewport.width, height: viewport.height })
    const axe = await new AxeBuilder({ page })
      .withTags(['wcag2a', 'wcag2aa', 'wcag21aa', 'wcag22aa'])
      .analyze()
    const violations = axe.violations.map(
      (v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    )
    expect(violations, `${name} at ${viewport.name}`).toEqual([])
    if (viewport.name === 'phone') {
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      )
      expect(overflow, `${name} scrolls sideways at 390 px`).toBeLessThanOrEqual(0)
    }
    await page.screenshot({ path: outputPath(`console-${name}-${viewport.name}.png`), fullPage: true })
  }
  await page.setViewportSize({ width: 1280, height: 800 })
  expect(errors, `browser console errors on ${name}`).toEqual([])
}

/** The HTML of every console page visited after `from` in this test, fetched again as the browser would. */
export async function htmlOf(page: Page, url: string): Promise<string> {
  const response = await page.request.get(url)
  return response.text()
}
