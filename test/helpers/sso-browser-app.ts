import type { Browser } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'
import { launchBrowser } from './browser.js'
import { freePort } from './free-port.js'
import { FollowingClock, type TestApp, useTestApp } from './test-app.js'

export interface SsoBrowserApp {
  t: TestApp
  /** The app's public URL, on the loopback port it listens on. */
  baseUrl: string
  browser: Browser
}

/**
 * A file's app listening on a loopback port its public URL names — an identity provider returns the
 * browser there, so the port is chosen before the app is built —, a clock following the wall clock, the
 * outbound rule relaxed for identity providers on loopback over plain http, and a browser. The fields are
 * filled before the file's tests run.
 */
export function useSsoBrowserApp(): SsoBrowserApp {
  let port = 0
  const state = { baseUrl: '' } as SsoBrowserApp
  state.t = useTestApp(async () => {
    port = await freePort()
    state.baseUrl = `http://127.0.0.1:${port}`
    return {
      clock: new FollowingClock(),
      env: {
        TENANTRY_PUBLIC_URL: state.baseUrl,
        TENANTRY_OUTBOUND_ALLOW_HTTP: 'true',
        TENANTRY_OUTBOUND_ALLOW_PRIVATE: 'true',
      },
    }
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
