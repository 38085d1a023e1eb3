import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Browser, chromium } from 'playwright-core'

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
