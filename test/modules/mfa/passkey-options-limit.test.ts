import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../../src/config.js'
import { PASSKEY_OPTIONS_WINDOW_MS } from '../../../src/modules/mfa/passkey-sign-in.service.js'
import { createTestApp, type TestApp } from '../../helpers/test-app.js'

/**
 * Passkey sign-in options are asked without credentials and each writes a challenge row: an address that
 * asks for them without end is refused (429 with Retry-After) instead of filling the table, while another
 * address is served (docs/operations.md, Limits). Without the limit the fourth request below is a 200.
 */
let t: TestApp
beforeAll(async () => {
  t = await createTestApp({ env: { TENANTRY_PASSKEY_OPTIONS_LIMIT_PER_ADDRESS: '3' } })
})
afterAll(async () => {
  await t.close()
})

const ask = (client: string) =>
  t.app.inject({ method: 'POST', url: '/v1/tokens/passkey/options', payload: {}, remoteAddress: client })

describe('passkey sign-in options, per client address', () => {
  it('are refused past the limit with Retry-After, for that address only, until the window ends', async () => {
    for (let asked = 0; asked < 3; asked += 1) expect((await ask('203.0.113.7')).statusCode).toBe(200)
    const refused = await ask('203.0.113.7')
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error.reason).toBe('rate_limited')
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect((await ask('198.51.100.9')).statusCode).toBe(200)
    t.clock.advance(PASSKEY_OPTIONS_WINDOW_MS + 1)
    expect((await ask('203.0.113.7')).statusCode).toBe(200)
  })

  it('default to 1,000 per 15 minutes: far above a floor of people signing in behind one address', () => {
    expect(loadConfig({}).passkeyOptionsLimitPerAddress).toBe(1000)
    expect(PASSKEY_OPTIONS_WINDOW_MS).toBe(15 * 60_000)
  })
})
