import { createHmac } from 'node:crypto'

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

/** The associated data a webhook's encrypted secret is bound to (crypto/secrets.ts). */
export function webhookSecretAssociatedData(tenantId: string, webhookId: string): string {
  return `webhook:${tenantId}:${webhookId}`
}
