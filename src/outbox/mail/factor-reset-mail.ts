import { newId } from '../../crypto/uuid7.js'
import { DEFAULT_BRAND, formatUtc, html } from '../../html.js'
import { FACTOR_RESET_EMAIL, type NewOutboxRow } from '../outbox.repository.js'
import { UndeliverableMail } from './invitation-mail.js'
import { type MailOptions, mailFrame, type RenderedMail } from './mail-kit.js'

/**
 * The e-mail telling a person that an administrator reset their second factors (docs/security.md,
 * "Passkeys", "An administrator's reset"): who, when, what it means, and whom to tell when it was not
 * expected — a notice, with no link to follow (nothing in it can be used to act on the account).
 */
export interface FactorResetMailFacts {
  userId: string
  to: string
  /** The administrator's name as the audit trail shows it. */
  resetBy: string
  /** The administrator's e-mail address, when a person did it: whom to ask. */
  resetByEmail: string | null
  /** ISO 8601. */
  at: string
}

/** The outbox row of one factor-reset notice, for the write unit to queue (outbox/write-unit.ts). */
export function factorResetMailRow(facts: FactorResetMailFacts, now: Date): NewOutboxRow {
  return { id: newId(), tenantId: null, kind: FACTOR_RESET_EMAIL, payload: { ...facts }, now }
}

export function openFactorResetMail(payload: Record<string, unknown>): FactorResetMailFacts {
  for (const key of ['userId', 'to', 'resetBy', 'at'] as const) {
    if (typeof payload[key] !== 'string') throw new UndeliverableMail(`the mail has no ${key}`)
  }
  return { resetByEmail: null, ...payload } as unknown as FactorResetMailFacts
}

export function renderFactorResetMail(facts: FactorResetMailFacts, options: MailOptions = {}): RenderedMail {
  const brand = options.brand ?? DEFAULT_BRAND
  const when = formatUtc(new Date(facts.at))
  // A person is named with their address; an API key's reset is "an administrator" alone.
  const by = facts.resetByEmail ? `${facts.resetBy} (${facts.resetByEmail})` : undefined
  const subject = `Your second factors for ${brand.name} were reset`
  const lead = `Your second factors were reset by an administrator${by ? `, ${by},` : ''} on ${when}.`
  const meaning =
    'Your authenticator apps, passkeys and recovery codes no longer work, and you were signed out everywhere. ' +
    'Sign in with your password and set up a new second factor.'
  const whom = by ? `${by} or your organisation's administrator` : "your organisation's administrator"
  const unexpected = `If this was not expected, contact ${whom} at once: someone may be trying to take over your account.`
  const text = ['Hello,', '', lead, '', meaning, '', unexpected, ''].join('\n')
  const body = html`<p>Hello,</p>
<p>${lead}</p>
<p>${meaning}</p>
<p style="color: #555555;">${unexpected}</p>`
  return { subject, text, html: mailFrame(subject, body, options) }
}
