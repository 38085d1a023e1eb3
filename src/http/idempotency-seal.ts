import type { Kysely } from 'kysely'
import type { Keys } from '../crypto/keys.js'
import { decryptSecret, encryptSecret, isSecretEnvelope } from '../crypto/secrets.js'
import type { Database } from '../db/schema.js'

/**
 * Stored responses at rest (API.md §8). An answer kept for replay may carry a secret shown once (an API
 * key's, a webhook's signing secret, a SCIM token, a refreshed access token), so it is sealed with the
 * service's secret key (AES-256-GCM, crypto/secrets.ts), bound to the caller, the key and the request it
 * answers: a reader of the database finds no secret, and a sealed answer moved to another row does not
 * open there.
 */

export type SecretKeys = Pick<Keys, 'secretKey' | 'secretKeyId'>

/** Who claimed an Idempotency-Key: the caller's principal id and the key. */
export interface Claim {
  actor: string
  key: string
}

/** The status of a claim whose request still runs (no response stored yet). */
export const IN_PROGRESS = 0

/** The stored form of a response body. */
export function sealResponse(keys: SecretKeys, claim: Claim, requestHash: string, body: string): string {
  return JSON.stringify(encryptSecret(keys, body, sealedFor(claim, requestHash)))
}

/** What a sealed response is bound to: the caller, the key and the request it answered. */
function sealedFor(claim: Claim, requestHash: string): string {
  return `idempotency\u0000${claim.actor}\u0000${claim.key}\u0000${requestHash}`
}

/** The stored response's body, or undefined when it does not open here (another row's, another key's). */
export function openResponse(
  keys: SecretKeys,
  stored: { actor: string; key: string; response_body: string },
  requestHash: string,
): string | undefined {
  try {
    const envelope: unknown = JSON.parse(stored.response_body)
    if (!isSecretEnvelope(envelope)) return undefined
    return decryptSecret(keys, envelope, sealedFor(stored, requestHash))
  } catch {
    return undefined
  }
}

/**
 * Erasure (API.md §14): deletes every stored response that quotes one of `texts` (ignoring case). The
 * responses are sealed, so each is opened here rather than searched by the database: a scan of at most
 * 24 hours of keyed POSTs, in pages, for an operation people run rarely.
 */
export async function forgetResponsesQuoting(
  db: Kysely<Database>,
  keys: SecretKeys,
  texts: readonly string[],
): Promise<void> {
  const needles = texts.map((text) => text.toLowerCase())
  if (needles.length === 0) return
  let after: { actor: string; key: string } | undefined
  for (;;) {
    let page = db
      .selectFrom('idempotency_keys')
      .select(['actor', 'key', 'request_hash', 'response_body'])
      .where('status_code', '!=', IN_PROGRESS)
    if (after) {
      const { actor, key } = after
      page = page.where((eb) =>
        eb.or([eb('actor', '>', actor), eb.and([eb('actor', '=', actor), eb('key', '>', key)])]),
      )
    }
    const rows = await page.orderBy('actor').orderBy('key').limit(FORGET_PAGE).execute()
    for (const row of rows) {
      const body = (openResponse(keys, row, row.request_hash) ?? row.response_body).toLowerCase()
      if (needles.some((needle) => body.includes(needle))) {
        await db
          .deleteFrom('idempotency_keys')
          .where('actor', '=', row.actor)
          .where('key', '=', row.key)
          .execute()
      }
    }
    if (rows.length < FORGET_PAGE) return
    after = rows[rows.length - 1]
  }
}

const FORGET_PAGE = 500
