import { invalidField } from '../../errors.js'
import type { ExtensionInput, ExtensionRecord } from './memberships.schemas.js'

/**
 * Extensions of a membership (docs/product.md#memberships): every profile carries a default `webrtc` extension from a
 * telephony provider, whether or not that provider is in use on the tenant. Ours is the softphone in the
 * agent's browser: provider `twilio` (the brief's platform rings agents through Twilio Client), region
 * `default` (the provider picks the edge nearest the agent), sdkVersion `default` (whatever SDK the agent
 * application ships), and the user id as the client identity that rings.
 */
export const DEFAULT_WEBRTC = {
  type: 'webrtc',
  provider: 'twilio',
  region: 'default',
  sdkVersion: 'default',
  description: 'Default WebRTC extension',
} as const

function defaultWebrtcExtension(userId: string): ExtensionRecord {
  return { ...DEFAULT_WEBRTC, value: userId }
}

function fill(input: ExtensionInput): ExtensionRecord {
  return {
    description: input.description ?? '',
    provider: input.provider ?? '',
    region: input.region ?? '',
    sdkVersion: input.sdkVersion ?? '',
    type: input.type,
    value: input.value,
  }
}

/**
 * The extensions a client gave, filled, and whether the default webrtc extension (whose value is the
 * user's id) goes before them — it does when none of them is webrtc.
 */
export function givenExtensions(given: readonly ExtensionInput[] | undefined): {
  given: ExtensionRecord[]
  defaultFirst: boolean
} {
  const filled = (given ?? []).map(fill)
  return { given: filled, defaultFirst: !filled.some((e) => e.type === 'webrtc') }
}

/** The extensions as stored: the given ones, with the default webrtc one first when none is webrtc. */
export function extensionsFor(
  userId: string,
  given: readonly ExtensionInput[] | undefined,
): ExtensionRecord[] {
  const extensions = givenExtensions(given)
  return extensions.defaultFirst ? [defaultWebrtcExtension(userId), ...extensions.given] : extensions.given
}

/**
 * The extension a client names as active: one of the user's extensions, given whole (matched on type and
 * value) or by its value alone. Anything else is a 400.
 */
export function resolveActiveExtension(
  requested: ExtensionInput | string,
  extensions: readonly ExtensionRecord[],
): ExtensionRecord {
  const match =
    typeof requested === 'string'
      ? extensions.find((e) => e.value === requested)
      : extensions.find((e) => e.type === requested.type && e.value === requested.value)
  if (!match)
    throw invalidField('activeExtension', 'must be one of the user’s extensions, or the value of one')
  return match
}

/** An extension as read from the database's JSON, every field a string. */
export function toExtensionRecord(stored: object): ExtensionRecord {
  const e = stored as Partial<Record<keyof ExtensionRecord, unknown>>
  const text = (value: unknown) => (typeof value === 'string' ? value : '')
  return {
    description: text(e.description),
    provider: text(e.provider),
    region: text(e.region),
    sdkVersion: text(e.sdkVersion),
    type: text(e.type),
    value: text(e.value),
  }
}
