import AxeBuilder from '@axe-core/playwright'
import * as OTPAuth from 'otpauth'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, expect } from 'vitest'
import { launchBrowser, outputPath } from './browser.js'
import { openPage, VIEWPORTS } from './console.js'
import { freePort } from './free-port.js'
import { FollowingClock, type TestApp, useTestApp } from './test-app.js'

/**
 * The console's second factors in Chromium (docs/console.md "Second factors"): an app whose public URL is
 * `http://localhost:<port>` — WebAuthn's relying party is that host, and Chromium refuses an IP address
 * as one —, listening on loopback, its clock following the wall clock (a TOTP code is accepted once per
 * account and 30-second step, so a test moves the clock a step on before each new code), and a browser.
 */
export interface ConsoleOnLocalhost {
  t: TestApp
  baseUrl: string
  browser: Browser
}

export function useConsoleOnLocalhost(): ConsoleOnLocalhost {
  let port = 0
  const state = { baseUrl: '' } as ConsoleOnLocalhost
  state.t = useTestApp(async () => {
    port = await freePort()
    state.baseUrl = `http://localhost:${port}`
    return { clock: new FollowingClock(), env: { TENANTRY_PUBLIC_URL: state.baseUrl } }
  })
  beforeAll(async () => {
    await state.t.app.listen({ port, host: '127.0.0.1' })
    state.browser = await launchBrowser()
  })
  afterAll(async () => {
    await state.browser?.close()
  })
  return state
}

/** The code an authenticator app shows at `at` for a base32 key (RFC 6238: SHA-1, 6 digits, 30 s). */
export function totpCode(secret: string, at: Date): string {
  const totp = new OTPAuth.TOTP({
    secret: OTPAuth.Secret.fromBase32(secret.replace(/\s/g, '')),
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
  })
  return totp.generate({ timestamp: at.getTime() })
}

/** A code not used yet: the app's clock moves one step on first (a code is taken once per step). */
export function nextCode(t: TestApp, secret: string): string {
  t.clock.advance(30_000)
  return totpCode(secret, t.clock.now())
}

/** An authenticator app added and confirmed over HTTP for the bearer of `token`; its key. */
export async function enrolTotpOverHttp(
  t: TestApp,
  token: string,
  name?: string,
): Promise<{ id: string; secret: string }> {
  const started = await t.request('POST', '/v1/me/factors/totp', { token, body: name ? { name } : {} })
  if (started.status !== 201) throw new Error(`TOTP enrolment: ${JSON.stringify(started.body)}`)
  const { id, secret } = started.body.result as { id: string; secret: string }
  const verified = await t.request('POST', `/v1/me/factors/${id}/verify`, {
    token,
    body: { code: nextCode(t, secret) },
  })
  if (verified.status !== 200) throw new Error(`TOTP verification: ${JSON.stringify(verified.body)}`)
  return { id, secret }
}

/** A token won with the password and the app's code (a second factor of now: step-up operations pass). */
export async function tokenWithCode(
  t: TestApp,
  email: string,
  password: string,
  secret: string,
): Promise<string> {
  const first = await t.request('POST', '/v1/tokens', { body: { username: email, password } })
  expect(first.body.error?.reason).toBe('mfa_required')
  const second = await t.request('POST', '/v1/tokens/mfa', {
    body: { mfaToken: first.body.error.mfa.token, code: nextCode(t, secret) },
  })
  if (second.status !== 200) throw new Error(`second factor: ${JSON.stringify(second.body)}`)
  return second.body.token
}

/**
 * Chromium's virtual authenticator in a context (DevTools protocol WebAuthn): a platform authenticator
 * with resident keys and user verification that always verifies — what a passkey on a laptop is.
 */
export async function addVirtualAuthenticator(page: Page): Promise<string> {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  })
  return authenticatorId
}

/** A new page of a new context (JavaScript on unless asked), its console errors collected. */
export async function freshPage(
  browser: Browser,
  javaScriptEnabled = true,
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ javaScriptEnabled })
  const { page, errors } = await openPage(context)
  page.setDefaultTimeout(20_000)
  return { context, page, errors }
}

/** The e-mail and the password, typed into the sign-in's two steps. */
export async function enterPassword(
  page: Page,
  baseUrl: string,
  email: string,
  password: string,
): Promise<void> {
  await page.goto(`${baseUrl}/console`)
  await page.getByLabel('E-mail').fill(email)
  await page.getByRole('button', { name: 'Continue' }).click()
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await page.waitForLoadState()
}

export const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent()

/**
 * The checks of every page (docs/console.md "What every page passes") for a console page open with
 * JavaScript off: screenshots and the sideways-scrolling check on the page itself; axe-core, which needs
 * JavaScript, on the same HTML in `axeIn` (a context with it on) as a browser without JavaScript draws it
 * — the console's stylesheet from the app, the <noscript> notes shown, no script run.
 */
export async function checkPageWithoutJs(
  page: Page,
  name: string,
  errors: string[],
  axeIn: BrowserContext,
  baseUrl: string,
): Promise<void> {
  const shot = `console-${name}`
  const axePage = await axeIn.newPage()
  const drawn = (await page.content())
    .replace(/<script\b[^>]*>[\s\S]*?<\/script>/g, '')
    .replace(/<noscript>/g, '<div>')
    .replace(/<\/noscript>/g, '</div>')
    .replace(/(href|src)="\/console\//g, `$1="${baseUrl}/console/`)
  await axePage.setContent(drawn)
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
  await axePage.close()
  await page.setViewportSize({ width: VIEWPORTS[0].width, height: VIEWPORTS[0].height })
  expect(errors, `browser console errors on ${shot}`).toEqual([])
}
