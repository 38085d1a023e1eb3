import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { type Browser, type BrowserContext, chromium } from 'playwright-core'
import { OutboxWorker } from '../../src/outbox/outbox-worker.js'
import { startSmtpServer, type TestSmtpServer } from './smtp.js'
import { createTestApp, type TestApp } from './test-app.js'

/**
 * A real Chromium driven by playwright-core: the browser tests open the pages the service serves
 * exactly as a person would. The system's (Debian's `chromium`, or CHROMIUM_PATH) is preferred; on a
 * machine without one, the headless Chromium that `@sparticuz/chromium` ships inside its npm package,
 * so that `npm install && npm test` needs nothing else.
 */
const SYSTEM_CHROMIUM = '/usr/bin/chromium'

const COMMON_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
]

/**
 * The bundled build's recommended flags (made for one page per short-lived function) include some that
 * switch browser defences off — the same-origin policy, mixed-content blocking, site isolation — and a
 * test of a page's security must see the defaults a person's browser has; and `--single-process`, with
 * which the browser dies when a second context opens (each test opens its own). Those are dropped; the
 * rest are what the build needs to start (no zygote, its own GL).
 */
const DROPPED_FLAGS = [
  '--disable-web-security',
  '--allow-running-insecure-content',
  '--disable-site-isolation-trials',
  '--single-process',
]

export interface ChromiumExecutable {
  path: string
  args: string[]
  /** Where it comes from: the system's or the npm package's. */
  source: 'system' | 'bundled'
}

export async function chromiumExecutable(): Promise<ChromiumExecutable> {
  const chosen = process.env.CHROMIUM_PATH || (existsSync(SYSTEM_CHROMIUM) ? SYSTEM_CHROMIUM : undefined)
  if (chosen) return { path: chosen, args: COMMON_ARGS, source: 'system' }
  const { default: bundled } = await import('@sparticuz/chromium')
  const args = bundled.args.filter((flag) => !DROPPED_FLAGS.includes(flag) && !flag.startsWith('--headless'))
  return { path: await unpackBundledChromium(), args: [...COMMON_ARGS, ...args], source: 'bundled' }
}

/**
 * Unpacks the bundled Chromium once per machine into <tmp>/tenantry-chromium-<version>/ (~200 MB,
 * a few seconds) and reuses it afterwards. The package unpacks into the temp folder it is given and,
 * if `chromium` is already there, trusts it — so a run killed mid-unpack would leave a broken binary
 * behind. Hence: unpack in a child process whose TMPDIR is a fresh folder, then rename that folder
 * into place in one step; a concurrent unpacker (the other test worker) loses the rename and uses
 * the winner's.
 */
async function unpackBundledChromium(): Promise<string> {
  // The package exports only its entry (build/index.js); its package.json lies one folder up.
  const entry = fileURLToPath(import.meta.resolve('@sparticuz/chromium'))
  const { version } = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as {
    version: string
  }
  const home = join(tmpdir(), `tenantry-chromium-${version}`)
  const binary = join(home, 'chromium')
  if (existsSync(binary)) return binary
  const partial = mkdtempSync(`${home}.partial-`)
  await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', "await (await import('@sparticuz/chromium')).default.executablePath()"],
    { env: { ...process.env, TMPDIR: partial } },
  )
  try {
    renameSync(partial, home)
  } catch (error) {
    if (!existsSync(binary)) throw error
    rmSync(partial, { recursive: true, force: true })
  }
  return binary
}

export async function launchBrowser(): Promise<Browser> {
  const { path, args } = await chromiumExecutable()
  return chromium.launch({ executablePath: path, args })
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
