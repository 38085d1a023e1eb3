import { createHmac } from 'node:crypto'
import type { Keys } from '../crypto/keys.js'
import { decryptSecret, type SecretEnvelope } from '../crypto/secrets.js'
import type { WebhookRow } from '../db/schema.js'

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the secret is "whsec_" + base64 key
 * bytes; the signature is "v1," + base64(HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")).
 */
export function signWebhook(
  secret: string,
  messageId: string,
  timestampSeconds: number,
  body: string,
): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  const mac = createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64')
  return `v1,${mac}`
}

/**
 * The `webhook-signature` header: one `v1,…` entry per secret, space-separated, as Standard Webhooks
 * allows — a receiver accepts the message when any entry verifies with the secret it holds.
 */
export function signatureHeader(
  secrets: readonly string[],
  messageId: string,
  timestampSeconds: number,
  body: string,
): string {
  return secrets.map((secret) => signWebhook(secret, messageId, timestampSeconds, body)).join(' ')
}

/** The associated data a webhook's encrypted secret is bound to (crypto/secrets.ts). */
export function webhookSecretAssociatedData(tenantId: string, webhookId: string): string {
  return `webhook:${tenantId}:${webhookId}`
}

/**
 * The associated data of the secret a rotation replaced: its own, so that the two envelopes cannot be
 * swapped between the columns.
 */
export function previousWebhookSecretAssociatedData(tenantId: string, webhookId: string): string {
  return `webhook:${tenantId}:${webhookId}:previous`
}

type SecretKeys = Pick<Keys, 'secretKey' | 'secretKeyId'>

/**
 * The secrets a delivery at `now` is signed with: the current one, and the one a rotation replaced until
 * its 24 hours are over (docs/webhooks.md#operations-test-redeliver-rotate-the-secret: the old secret keeps verifying meanwhile).
 */
export function signingSecrets(
  keys: SecretKeys,
  webhook: Pick<WebhookRow, 'tenant_id' | 'id' | 'secret' | 'previous_secret' | 'previous_secret_expires'>,
  now: Date,
): string[] {
  const secrets = [
    decryptSecret(
      keys,
      webhook.secret as unknown as SecretEnvelope,
      webhookSecretAssociatedData(webhook.tenant_id, webhook.id),
    ),
  ]
  if (webhook.previous_secret && webhook.previous_secret_expires && webhook.previous_secret_expires > now) {
    secrets.push(
      decryptSecret(
        keys,
        webhook.previous_secret as unknown as SecretEnvelope,
        previousWebhookSecretAssociatedData(webhook.tenant_id, webhook.id),
      ),
    )
  }
  return secrets
}
