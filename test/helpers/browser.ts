import { mkdirSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Browser, type BrowserContext, chromium } from 'playwright-core'
import { OutboxWorker } from '../../src/outbox/outbox-worker.js'
import { startSmtpServer, type TestSmtpServer } from './smtp.js'
import { createTestApp, type TestApp } from './test-app.js'

/**
 * A real Chromium (Debian's `chromium` package, driven by playwright-core): the browser tests open the
 * pages the service serves exactly as a person would.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}

/** test-output/<name>: where a test leaves screenshots for a person to look at (git-ignored). */
export function outputPath(name: string): string {
  const dir = fileURLToPath(new URL('../../test-output', import.meta.url))
  mkdirSync(dir, { recursive: true })
  return join(dir, name)
}

/**
 * The service's pages as a person meets them: the app listening on a loopback port, its mail going out
 * through the outbox worker to a real SMTP server (links pointing at the listening server), and a
 * Chromium context with JavaScript turned off (the pages are plain forms).
 */
export interface PagesInBrowser {
  t: TestApp
  smtp: TestSmtpServer
  baseUrl: string
  context: BrowserContext
  close(): Promise<void>
}

export async function startPagesInBrowser(): Promise<PagesInBrowser> {
  const smtp = await startSmtpServer()
  const t = await createTestApp({ env: { TENANTRY_SMTP_URL: smtp.url } })
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
  // The links in the mail point at the listening server: TENANTRY_PUBLIC_URL is its address.
  const worker = new OutboxWorker({ ...t.ctx, config: { ...t.config, publicUrl: baseUrl } })
  worker.start()
  const browser = await launchBrowser()
  const context = await browser.newContext({ javaScriptEnabled: false })
  return {
    t,
    smtp,
    baseUrl,
    context,
    close: async () => {
      await context.close()
      await browser.close()
      await worker.stop()
      await t.close()
      await smtp.close()
    },
  }
}
