import type { Keys } from '../../crypto/keys.js'
import { decryptSecret, encryptSecret, isSecretEnvelope, type SecretEnvelope } from '../../crypto/secrets.js'
import { newId } from '../../crypto/uuid7.js'
import { INVITATION_EMAIL, type NewOutboxRow } from '../outbox.repository.js'

/**
 * The invitation e-mail as an outbox row (docs/api.md#the-invitation-e-mail). The row holds what the mail says, snapshotted when
 * the invitation was made, and the one-time token encrypted (AES-256-GCM, bound to the row id): the
 * database holds the token in plaintext nowhere, and the envelope is dropped once the mail is sent.
 */
export interface InvitationMailFacts {
  tenantId: string
  userId: string
  to: string
  tenantName: string
  roleName: string
  inviterName: string
  /** ISO 8601. */
  expiresAt: string
}

interface InvitationMailPayload extends InvitationMailFacts {
  envelope?: SecretEnvelope
}

function associatedData(outboxId: string): string {
  return `outbox:${outboxId}`
}

/**
 * The outbox row of one invitation e-mail, for the write unit to queue with the change that issues the
 * invitation (outbox/write-unit.ts): a new id, and the token encrypted bound to it. Facts without
 * `userId` are for a statement that adds it to the payload from the membership it inserts
 * (memberships/membership-write.ts).
 */
export function invitationMailRow(
  keys: Pick<Keys, 'secretKey' | 'secretKeyId'>,
  facts: InvitationMailFacts | Omit<InvitationMailFacts, 'userId'>,
  token: string,
  now: Date,
): NewOutboxRow {
  const id = newId()
  const payload = { ...facts, envelope: encryptSecret(keys, token, associatedData(id)) }
  return { id, tenantId: facts.tenantId, kind: INVITATION_EMAIL, payload, now }
}

export class UndeliverableMail extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UndeliverableMail'
  }
}

/** The facts and the token of a claimed row; UndeliverableMail when the row cannot ever be sent. */
export function openInvitationMail(
  keys: Pick<Keys, 'secretKey' | 'secretKeyId'>,
  outboxId: string,
  payload: Record<string, unknown>,
): { facts: InvitationMailFacts; token: string } {
  const { envelope, ...facts } = payload as Partial<InvitationMailPayload>
  if (!isSecretEnvelope(envelope)) throw new UndeliverableMail('the mail has no token envelope')
  for (const key of [
    'tenantId',
    'userId',
    'to',
    'tenantName',
    'roleName',
    'inviterName',
    'expiresAt',
  ] as const) {
    if (typeof facts[key] !== 'string') throw new UndeliverableMail(`the mail has no ${key}`)
  }
  try {
    return {
      facts: facts as InvitationMailFacts,
      token: decryptSecret(keys, envelope, associatedData(outboxId)),
    }
  } catch (error) {
    throw new UndeliverableMail(error instanceof Error ? error.message : String(error))
  }
}
