import type { Kysely, Transaction } from 'kysely'
import type { Keys } from '../../crypto/keys.js'
import { decryptSecret, encryptSecret, isSecretEnvelope, type SecretEnvelope } from '../../crypto/secrets.js'
import { newId } from '../../crypto/uuid7.js'
import type { Database } from '../../db/schema.js'
import {
  deleteQueuedInvitationMail,
  INVITATION_EMAIL,
  insertOutboxRows,
  type NewOutboxRow,
} from '../outbox.repository.js'

/**
 * The invitation e-mail as an outbox row (API.md §6). The row holds what the mail says, snapshotted when
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

type Executor = Kysely<Database> | Transaction<Database>

function associatedData(outboxId: string): string {
  return `outbox:${outboxId}`
}

/**
 * The outbox row of one invitation e-mail, for the caller to insert with the change that issues the
 * invitation: a new id, and the token encrypted bound to it. Facts without `userId` are for an insert
 * that adds it to the payload from the row it creates (memberships.repository insertMembershipByEmail).
 * `lease`: the one this process's worker gave (OutboxSignal.lease), if any.
 */
export function invitationMailRow(
  keys: Pick<Keys, 'secretKey' | 'secretKeyId'>,
  facts: InvitationMailFacts | Omit<InvitationMailFacts, 'userId'>,
  token: string,
  now: Date,
  lease?: Date,
): NewOutboxRow {
  const id = newId()
  const payload = { ...facts, envelope: encryptSecret(keys, token, associatedData(id)) }
  return { id, tenantId: facts.tenantId, kind: INVITATION_EMAIL, payload, now, lease }
}

/**
 * Queues the mail of a re-issued invitation inside the caller's transaction, replacing any unsent mail
 * of the same membership (whose link is dead now). A new membership has no mail to replace: it inserts
 * `invitationMailRow` with the membership instead. Returns the row, to hand over after the commit.
 */
export async function enqueueInvitationMail(
  tx: Executor,
  keys: Pick<Keys, 'secretKey' | 'secretKeyId'>,
  facts: InvitationMailFacts,
  token: string,
  now: Date,
  lease?: Date,
): Promise<NewOutboxRow> {
  await deleteQueuedInvitationMail(tx, facts.tenantId, facts.userId)
  const row = invitationMailRow(keys, facts, token, now, lease)
  await insertOutboxRows(tx, [row])
  return row
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
