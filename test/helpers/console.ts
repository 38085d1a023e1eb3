import AxeBuilder from '@axe-core/playwright'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { expect } from 'vitest'
import { outputPath, type PagesInBrowser, startPagesInBrowser } from './browser.js'
import { TEST_ADMIN } from './test-env.js'

/**
 * The console as a person meets it in Chromium (docs/console.md): signing in through the forms, and the checks
 * every page must pass at a desktop and a phone size — axe-core's WCAG 2.2 AA rules with 0 violations, no
 * horizontal scrolling at 390 px, no browser console error — with a screenshot of each in test-output/.
 */
export const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const

/**
 * A page that records every browser console error and failed request it meets. `answersWithStatus`: the
 * page itself may answer 4xx (a public page's refusal is a page with its status, docs/api.md#tenant-users-and-invitations, docs/api.md#passwords-and-the-existing-clients-flows), which
 * the browser logs as an error of that document; any other failure still counts.
 */
export async function openPage(
  context: BrowserContext,
  answersWithStatus = false,
): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage()
  const errors: string[] = []
  page.on('console', (message) => {
    if (message.type() !== 'error') return
    const ofTheDocument =
      message.location().url === page.url() && /^Failed to load resource/.test(message.text())
    if (!(answersWithStatus && ofTheDocument)) errors.push(message.text())
  })
  page.on('pageerror', (error) => errors.push(error.message))
  return { page, errors }
}

export async function signIn(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/console`)
  await page.getByLabel('E-mail').fill(email)
  await page.getByRole('button', { name: 'Continue' }).click()
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await page.waitForLoadState()
}

/** Every page check of docs/console.md#what-every-page-passes at both sizes; `name` names the screenshots. */
export async function checkPage(page: Page, name: string, errors: string[]): Promise<void> {
  await checkPageAtBothSizes(page, `console-${name}`, errors)
}

/**
 * The checks every page a person sees passes, the console's and the public ones alike (docs/pages.md):
 * at 1280 and 390 px, axe-core's WCAG 2.2 AA rules with 0 violations, no sideways scrolling at 390 px,
 * and no browser console error; screenshots test-output/<shot>-desktop.png and -phone.png. axe-core
 * runs in the page, so for a page open with JavaScript off it runs on the same HTML in `axeIn`, a
 * context with JavaScript on, at the same size (a public page runs no script of its own either way).
 */
export async function checkPageAtBothSizes(
  page: Page,
  shot: string,
  errors: string[],
  axeIn?: BrowserContext,
): Promise<void> {
  const axePage = axeIn ? await axeIn.newPage() : page
  if (axeIn) await axePage.setContent(await page.content())
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize({ width: viewport.width, height: viewport.height })
    await axePage.setViewportSize({ width: viewport.width, height: viewport.height })
    const axe = await new AxeBuilder({ page: axePage })
      .withTags(['wcag2a', 'wcag2aa', 'wcag21aa', 'wcag22aa'])
      .analyze()
    const violations = axe.violations.map(
      (v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    )
    expect(violations, `${shot} at ${viewport.name}`).toEqual([])
    if (viewport.name === 'phone') {
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      )
      expect(overflow, `${shot} scrolls sideways at 390 px`).toBeLessThanOrEqual(0)
    }
    await page.screenshot({ path: outputPath(`${shot}-${viewport.name}.png`), fullPage: true })
  }
  if (axeIn) await axePage.close()
  await page.setViewportSize({ width: VIEWPORTS[0].width, height: VIEWPORTS[0].height })
  expect(errors, `browser console errors on ${shot}`).toEqual([])
}

/** The HTML and the web storage of a page hold no platform token (a JWT). */
export async function expectNoTokenInPage(page: Page): Promise<void> {
  const jwt = /eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/
  expect(await page.content()).not.toMatch(jwt)
  const storage = await page.evaluate(
    () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }),
  )
  expect(storage).not.toMatch(jwt)
  expect(await page.evaluate(() => document.cookie)).toBe('')
}

/**
 * The console's pages in Chromium (startPagesInBrowser: the listening app, its SMTP server and mail
 * worker, a context with JavaScript off) plus `withJs`, a context with JavaScript on; the administrator
 * is signed in beforehand in the contexts `signedIn` names. `close` ends both contexts and the rest.
 */
export interface ConsoleInBrowser extends PagesInBrowser {
  browser: Browser
  withJs: BrowserContext
}

export async function startConsoleInBrowser(
  signedIn: readonly ('withJs' | 'withoutJs')[] = [],
): Promise<ConsoleInBrowser> {
  const pages = await startPagesInBrowser()
  const browser = pages.context.browser() as Browser
  const withJs = await browser.newContext()
  const contexts = { withJs, withoutJs: pages.context }
  for (const which of signedIn) {
    const { page } = await openPage(contexts[which])
    await signIn(page, pages.baseUrl, TEST_ADMIN.email, TEST_ADMIN.password)
    await page.close()
  }
  return {
    ...pages,
    browser,
    withJs,
    close: async () => {
      await withJs.close()
      await pages.close()
    },
  }
}
