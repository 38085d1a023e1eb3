import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { isIP } from 'node:net'
import {
  addressAllowed,
  bareHost,
  checkOutboundUrl,
  type OutboundLookup,
  type OutboundPolicy,
  OutboundRefusedError,
  portOf,
} from './outbound.js'

/** How long a save waits for a name to resolve; past it, the connect-time check is the judge. */
const SAVE_LOOKUP_TIMEOUT_MS = 3_000

/**
 * The rule as far as it can be checked when an address is SAVED (docs/webhooks.md#the-outbound-rule), so the administrator learns
 * at once: checkOutboundUrl, then — for a name — where the name points now. `localhost` and `*.localhost`
 * are loopback by definition (RFC 6761); any other name is resolved (`policy.lookup`, default dns.lookup)
 * and refused when any address it resolves to is not allowed. A name that does not resolve now, or not
 * within SAVE_LOOKUP_TIMEOUT_MS, is let through: the connect-time check runs on every call anyway, and
 * refuses whatever the name points to then (a name saved public and rebound to 127.0.0.1 included).
 */
export async function checkOutboundAddress(url: string | URL, policy: OutboundPolicy): Promise<URL> {
  const parsed = checkOutboundUrl(url, policy)
  if (policy.allowPrivate) return parsed
  const host = bareHost(parsed).replace(/\.$/, '').toLowerCase()
  if (isIP(host) !== 0) return parsed
  if (host === 'localhost' || host.endsWith('.localhost')) {
    throw new OutboundRefusedError(`${host} is a loopback name, which is not allowed`, parsed.href)
  }
  const addresses = await resolveForSave(policy, host)
  const port = portOf(parsed)
  const refused = addresses.filter((entry) => !addressAllowed(entry.address, port, policy))
  if (refused.length > 0) {
    throw new OutboundRefusedError(
      `${host} resolves to ${refused.map((entry) => entry.address).join(', ')}, which is not allowed`,
      parsed.href,
    )
  }
  return parsed
}

function resolveForSave(policy: OutboundPolicy, host: string): Promise<LookupAddress[]> {
  const resolve = policy.lookup ?? (dnsLookup as unknown as OutboundLookup)
  return new Promise((settle) => {
    const timer = setTimeout(() => settle([]), SAVE_LOOKUP_TIMEOUT_MS)
    resolve(host, { all: true }, (error, addresses) => {
      clearTimeout(timer)
      if (error) settle([])
      else settle(Array.isArray(addresses) ? addresses : [{ address: addresses, family: isIP(addresses) }])
    })
  })
}
