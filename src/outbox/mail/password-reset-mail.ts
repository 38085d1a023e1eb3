import type { Keys } from '../../crypto/keys.js'
import { decryptSecret, encryptSecret, isSecretEnvelope } from '../../crypto/secrets.js'
import { newId } from '../../crypto/uuid7.js'
import { type NewOutboxRow, PASSWORD_RESET_EMAIL } from '../outbox.repository.js'
import { UndeliverableMail } from './invitation-mail.js'

/**
 * The password-reset e-mail as an outbox row (docs/api.md#passwords-and-the-existing-clients-flows), like the invitation e-mail: the facts it says,
 * and the one-time token encrypted bound to the row id, dropped once the mail is sent or given up.
 */
export interface PasswordResetMailFacts {
  userId: string
  to: string
  /** ISO 8601. */
  expiresAt: string
  /** Who asked: the user itself (the reset form) or an administrator's name. */
  requestedBy: 'self' | string
}

function associatedData(outboxId: string): string {
  return `outbox:${outboxId}`
}

/** The outbox row of one password-reset e-mail, for the write unit to queue (outbox/write-unit.ts). */
export function passwordResetMailRow(
  keys: Pick<Keys, 'secretKey' | 'secretKeyId'>,
  facts: PasswordResetMailFacts,
  token: string,
  now: Date,
): NewOutboxRow {
  const id = newId()
  const payload = { ...facts, envelope: encryptSecret(keys, token, associatedData(id)) }
  return { id, tenantId: null, kind: PASSWORD_RESET_EMAIL, payload, now }
}

export function openPasswordResetMail(
  keys: Pick<Keys, 'secretKey' | 'secretKeyId'>,
  outboxId: string,
  payload: Record<string, unknown>,
): { facts: PasswordResetMailFacts; token: string } {
  const { envelope, ...facts } = payload
  if (!isSecretEnvelope(envelope)) throw new UndeliverableMail('the mail has no token envelope')
  for (const key of ['userId', 'to', 'expiresAt', 'requestedBy'] as const) {
    if (typeof facts[key] !== 'string') throw new UndeliverableMail(`the mail has no ${key}`)
  }
  try {
    return {
      facts: facts as unknown as PasswordResetMailFacts,
      token: decryptSecret(keys, envelope, associatedData(outboxId)),
    }
  } catch (error) {
    throw new UndeliverableMail(error instanceof Error ? error.message : String(error))
  }
}
