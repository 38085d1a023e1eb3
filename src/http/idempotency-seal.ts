import type { Kysely } from 'kysely'
import type { Keys } from '../crypto/keys.js'
import { decryptSecret, encryptSecret, isSecretEnvelope } from '../crypto/secrets.js'
import type { Database } from '../db/schema.js'

/**
 * Stored responses at rest (docs/api.md#safe-retries). An answer kept for replay may carry a secret shown once (an API
 * key's, a webhook's signing secret, a SCIM token, a refreshed access token), so it is sealed with the
 * service's secret key (AES-256-GCM, crypto/secrets.ts), bound to the caller, the key and the request it
 * answers: a reader of the database finds no secret, and a sealed answer moved to another row does not
 * open there.
 */

export type SecretKeys = Pick<Keys, 'secretKey' | 'secretKeyId'>

/** Who claimed an Idempotency-Key: the caller's principal id, the key and the request's fingerprint. */
export interface Claim {
  actor: string
  key: string
  requestHash: string
}

/** The status of a claim whose request still runs (no response stored yet). */
export const IN_PROGRESS = 0

/** The stored form of a response body. */
export function sealResponse(keys: SecretKeys, claim: Claim, body: string): string {
  return JSON.stringify(encryptSecret(keys, body, sealedFor(claim)))
}

/** What a sealed response is bound to: the caller, the key and the request it answered. */
function sealedFor(claim: Claim): string {
  return `idempotency\u0000${claim.actor}\u0000${claim.key}\u0000${claim.requestHash}`
}

/** The stored response's body, or undefined when it does not open here (another row's, another key's). */
export function openResponse(
  keys: SecretKeys,
  stored: { actor: string; key: string; request_hash: string; response_body: string },
): string | undefined {
  try {
    const envelope: unknown = JSON.parse(stored.response_body)
    if (!isSecretEnvelope(envelope)) return undefined
    const claim = { actor: stored.actor, key: stored.key, requestHash: stored.request_hash }
    return decryptSecret(keys, envelope, sealedFor(claim))
  } catch {
    return undefined
  }
}

/**
 * Erasure (docs/product.md#offboarding-and-erasure): deletes every stored response that quotes one of `texts` (ignoring case). The
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
    const quoting = rows.filter((row) => {
      // An answer that does not open (stored before sealing, or under a replaced key) is read as it is.
      const body = (openResponse(keys, row) ?? row.response_body).toLowerCase()
      return needles.some((needle) => body.includes(needle))
    })
    if (quoting.length > 0) {
      await db
        .deleteFrom('idempotency_keys')
        .where((eb) =>
          eb.or(quoting.map((row) => eb.and([eb('actor', '=', row.actor), eb('key', '=', row.key)]))),
        )
        .execute()
    }
    if (rows.length < FORGET_PAGE) return
    after = rows[rows.length - 1]
  }
}

const FORGET_PAGE = 500
