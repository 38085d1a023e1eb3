import type { Keys } from '../../crypto/keys.js'
import { decryptSecret, encryptSecret, isSecretEnvelope } from '../../crypto/secrets.js'
import { newId } from '../../crypto/uuid7.js'
import { formatUtc, html } from '../../html.js'
import { type NewOutboxRow, PASSWORD_RESET_EMAIL } from '../outbox.repository.js'
import { UndeliverableMail } from './invitation-mail.js'
import type { RenderedMail } from './invitation-template.js'

/**
 * The password-reset e-mail as an outbox row (API.md §10), like the invitation e-mail: the facts it says,
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

/** Text and HTML parts: the link, its expiry, and what to do when the reset was not asked for. */
export function renderPasswordResetMail(facts: PasswordResetMailFacts, link: string): RenderedMail {
  const expires = formatUtc(new Date(facts.expiresAt))
  const subject = 'Reset your Tenantry password'
  const who =
    facts.requestedBy === 'self'
      ? 'Someone (hopefully you) asked to reset the password of this account.'
      : `${facts.requestedBy} asked for the password of this account to be reset.`
  const text = [
    'Hello,',
    '',
    who,
    '',
    'To choose a new password, open this link:',
    link,
    '',
    `The link works once and expires on ${expires}.`,
    '',
    'If you did not ask for this, you can ignore this e-mail: your password stays as it is.',
    '',
  ].join('\n')
  const body = html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${subject}</title></head>
<body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1a1a1a; max-width: 36rem;">
<p>Hello,</p>
<p>${who}</p>
<p><a href="${link}" style="display: inline-block; padding: 0.6rem 1.2rem; background: #1d4ed8; color: #ffffff;
text-decoration: none; border-radius: 0.3rem;">Choose a new password</a></p>
<p>Or copy this link into your browser:<br><span style="word-break: break-all;">${link}</span></p>
<p>The link works once and expires on ${expires}.</p>
<p style="color: #555555;">If you did not ask for this, you can ignore this e-mail: your password stays as it is.</p>
</body>
</html>
`
  return { subject, text, html: body.value }
}
