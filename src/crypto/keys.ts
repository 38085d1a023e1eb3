import { hkdfSync, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from 'pino'
import type { Config } from '../config.js'

/** The key material a running service needs, resolved once at start. */
export interface Keys {
  /** AES-256-GCM key for secrets at rest, with the id stored beside every ciphertext. */
  secretKey: Buffer
  secretKeyId: string
  /** HMAC key for access tokens. */
  tokenSecret: Uint8Array
}

const KEY_FILE = 'secret.key'

/**
 * TENANTRY_SECRET_KEY when set. Otherwise (config already refused this for a server database): for the
 * embedded database a key generated once into the data folder, mode 0600; for memory:// a throw-away
 * key. The token secret is TENANTRY_TOKEN_SECRET, or derived from the secret key so that one secret is
 * enough to run many processes.
 */
export function resolveKeys(config: Config, logger?: Pick<Logger, 'warn'>): Keys {
  let secretKey = config.secretKey
  if (!secretKey) {
    if (config.databaseUrl === 'memory://') {
      secretKey = randomBytes(32)
    } else {
      const file = join(config.dataDir, KEY_FILE)
      if (existsSync(file)) {
        secretKey = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')
      } else {
        mkdirSync(config.dataDir, { recursive: true })
        secretKey = randomBytes(32)
        writeFileSync(file, `${secretKey.toString('base64')}\n`, { mode: 0o600, flag: 'wx' })
        logger?.warn(
          { file },
          'TENANTRY_SECRET_KEY is not set: generated a key into the data folder. Back it up with the data; ' +
            'without it stored integration secrets cannot be decrypted.',
        )
      }
    }
  }
  const tokenSecret = config.tokenSecret
    ? new TextEncoder().encode(config.tokenSecret)
    : new Uint8Array(hkdfSync('sha256', secretKey, Buffer.alloc(0), 'tenantry access tokens', 32))
  return { secretKey, secretKeyId: keyId(secretKey), tokenSecret }
}

/** A short, stable, non-secret name for a key, stored beside each ciphertext for later rotation. */
export function keyId(key: Buffer): string {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'tenantry key id', 6)).toString('hex')
}
