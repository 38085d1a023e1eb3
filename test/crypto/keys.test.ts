import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { resolveKeys } from '../../src/crypto/keys.js'
import { decryptSecret, encryptSecret } from '../../src/crypto/secrets.js'

/**
 * Where the key for secrets at rest comes from (docs/operations.md#configuration): TENANTRY_SECRET_KEY; with the embedded
 * database and no key, one generated once into the data folder (mode 0600) with a warning; with a server
 * database and no key, no start at all.
 */
const folders: string[] = []
function freshFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tenantry-keys-'))
  folders.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function warnings() {
  const lines: Array<{ data: unknown; message: string }> = []
  return { lines, logger: { warn: (data: unknown, message: string) => lines.push({ data, message }) } as any }
}

describe('the secret key', () => {
  it('is required with a server database: the configuration is refused, naming the setting', () => {
    let error: unknown
    try {
      loadConfig({ DATABASE_URL: 'postgres://tenantry@db.internal:5432/tenantry' })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).problems.join('\n')).toContain('TENANTRY_SECRET_KEY is required')
    const key = randomBytes(32).toString('base64')
    const config = loadConfig({
      DATABASE_URL: 'postgres://tenantry@db.internal:5432/tenantry',
      TENANTRY_SECRET_KEY: key,
    })
    expect(resolveKeys(config).secretKey.toString('base64')).toBe(key)
  })

  it('is generated once into the data folder with mode 0600 and a warning, then read back unchanged', () => {
    const dataDir = freshFolder()
    const config = loadConfig({ TENANTRY_DATA_DIR: dataDir })
    const first = warnings()
    const keys = resolveKeys(config, first.logger)
    const file = join(dataDir, 'secret.key')
    expect(existsSync(file)).toBe(true)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64').equals(keys.secretKey)).toBe(true)
    expect(first.lines).toHaveLength(1)
    expect(first.lines[0]!.message).toContain('TENANTRY_SECRET_KEY is not set')
    // The warning names the file, never the key.
    expect(JSON.stringify(first.lines)).not.toContain(keys.secretKey.toString('base64'))

    const again = warnings()
    const reread = resolveKeys(loadConfig({ TENANTRY_DATA_DIR: dataDir }), again.logger)
    expect(reread.secretKey.equals(keys.secretKey)).toBe(true)
    expect(reread.secretKeyId).toBe(keys.secretKeyId)
    expect(again.lines).toHaveLength(0)
    // What the first process encrypted, the next one decrypts.
    const envelope = encryptSecret(keys, 'api-password', 'integration:t:i:password')
    expect(decryptSecret(reread, envelope, 'integration:t:i:password')).toBe('api-password')
  })

  it('comes from TENANTRY_SECRET_KEY when set, writing nothing; memory:// gets a throw-away key', () => {
    const dataDir = freshFolder()
    const key = randomBytes(32)
    const keys = resolveKeys(
      loadConfig({ TENANTRY_DATA_DIR: dataDir, TENANTRY_SECRET_KEY: key.toString('base64') }),
    )
    expect(keys.secretKey.equals(key)).toBe(true)
    expect(existsSync(join(dataDir, 'secret.key'))).toBe(false)

    const memory = loadConfig({ TENANTRY_DATA_DIR: dataDir, DATABASE_URL: 'memory://' })
    const a = resolveKeys(memory)
    const b = resolveKeys(memory)
    expect(a.secretKey.equals(b.secretKey)).toBe(false)
    expect(existsSync(join(dataDir, 'secret.key'))).toBe(false)
  })

  it('must be 32 bytes', () => {
    expect(() => loadConfig({ TENANTRY_SECRET_KEY: randomBytes(16).toString('base64') })).toThrow(ConfigError)
  })
})
