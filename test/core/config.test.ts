import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'

describe('loadConfig', () => {
  it('gives the documented defaults', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      dataDir: './data',
      databaseUrl: undefined,
      publicUrl: 'http://localhost:8080',
      adminEmail: 'admin@tenantry.local',
      invitationTtlSeconds: 86_400,
      logLevel: 'info',
      inProcessWorker: true,
      preparedStatements: true,
    })
    expect(Object.isFrozen(config)).toBe(true)
  })

  it('lists every problem at once', () => {
    let error: unknown
    try {
      loadConfig({
        PORT: '99999',
        DATABASE_URL: 'mysql://x',
        TENANTRY_PUBLIC_URL: 'ftp://x',
        TENANTRY_INVITATION_TTL: 'soon',
        TENANTRY_ADMIN_PASSWORD: 'short',
        TENANTRY_PREPARED_STATEMENTS: 'sometimes',
      })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    const problems = (error as ConfigError).problems.join('\n')
    for (const name of [
      'PORT',
      'DATABASE_URL',
      'TENANTRY_PUBLIC_URL',
      'TENANTRY_INVITATION_TTL',
      'TENANTRY_ADMIN_PASSWORD',
      'TENANTRY_PREPARED_STATEMENTS',
    ]) {
      expect(problems).toContain(name)
    }
  })

  it('requires a secret key with a server database, not with the embedded one', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://db/tenantry' })).toThrow(/TENANTRY_SECRET_KEY/)
    expect(() => loadConfig({ DATABASE_URL: 'memory://' })).not.toThrow()
    const key = Buffer.alloc(32, 1).toString('base64')
    expect(
      loadConfig({ DATABASE_URL: 'postgres://db/tenantry', TENANTRY_SECRET_KEY: key }).secretKey?.length,
    ).toBe(32)
  })

  it('sends prepared statements unless TENANTRY_PREPARED_STATEMENTS is off (for a pooler that cannot)', () => {
    expect(loadConfig({ TENANTRY_PREPARED_STATEMENTS: 'off' }).preparedStatements).toBe(false)
    expect(loadConfig({ TENANTRY_PREPARED_STATEMENTS: 'on' }).preparedStatements).toBe(true)
  })
})
