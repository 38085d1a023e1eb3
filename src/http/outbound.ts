/**
 * The outbound rule (docs/webhooks.md#the-outbound-rule) for every address a tenant administrator can make the service call
 * (webhook URLs, SAML metadata URLs, OIDC issuers): https only, and never an address in a loopback,
 * private, link-local, CGNAT, reserved or cloud-metadata range (IPv4 and IPv6, IPv4-mapped and the other
 * IPv6 forms that carry an IPv4 address included).
 *
 * The address is checked AT CONNECT TIME: names are resolved by a `lookup` hook handed to node:http(s),
 * so the socket only ever connects to an address that passed the check — a name that resolved to a public
 * address when the URL was saved and to 127.0.0.1 now (DNS rebinding) is refused. Redirects are followed
 * by hand (at most `maxRedirects`), each hop checked again. TENANTRY_OUTBOUND_ALLOW_HTTP=true and
 * TENANTRY_OUTBOUND_ALLOW_PRIVATE=true relax the rule (tests, closed networks).
 *
 * `outboundFetch(url, init)` is fetch-shaped and returns a standard Response, so it can stand in for fetch
 * (openid-client's customFetch, for one).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import { isIP } from 'node:net'
import { Readable } from 'node:stream'
import type { Config } from '../config.js'
import { isForbiddenAddress } from './forbidden-addresses.js'

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void
/** The shape of dns.lookup as node:net calls it (with `all: true` under happy eyeballs). */
export type OutboundLookup = (
  hostname: string,
  options: { family?: number | string; hints?: number; all?: boolean },
  callback: LookupCallback,
) => void

export interface OutboundPolicy {
  /** Allow http:// as well as https://. */
  allowHttp: boolean
  /** Allow every address (loopback, private, link-local, metadata…). */
  allowPrivate: boolean
  /** Redirects followed before giving up (default 5). */
  maxRedirects?: number
  /** Whole-exchange time limit in ms, body included (default 10 s). */
  timeoutMs?: number
  /** How names resolve (default dns.lookup). Tests hand in a resolver to play a rebinding name. */
  lookup?: OutboundLookup
  /** An address:port let through despite the ranges — only for tests that need one loopback peer. */
  exempt?: (address: string, port: number) => boolean
}

/** The rule said no: the address, scheme or redirect chain is not allowed. */
export class OutboundRefusedError extends Error {
  readonly code = 'OUTBOUND_REFUSED'
  constructor(
    message: string,
    readonly url: string,
  ) {
    super(message)
    this.name = 'OutboundRefusedError'
  }
}

export interface OutboundInit {
  method?: string
  headers?: ConstructorParameters<typeof Headers>[0]
  body?: ConstructorParameters<typeof Response>[0]
  signal?: AbortSignal | null
  redirect?: 'follow' | 'manual' | 'error'
}

export type OutboundFetch = (url: string | URL, init?: OutboundInit) => Promise<Response>

const STRICT: OutboundPolicy = { allowHttp: false, allowPrivate: false }

/** The policy the configuration asks for; `lookup`, when given, resolves names (tests hand one in). */
export function outboundPolicy(
  config: Pick<Config, 'outboundAllowHttp' | 'outboundAllowPrivate'>,
  lookup?: OutboundLookup,
): OutboundPolicy {
  return {
    allowHttp: config.outboundAllowHttp,
    allowPrivate: config.outboundAllowPrivate,
    ...(lookup ? { lookup } : {}),
  }
}

/** A fetch bound to one policy (e.g. `createOutboundFetch(outboundPolicy(config))`). */
export function createOutboundFetch(policy: OutboundPolicy): OutboundFetch {
  return (url, init) => outboundFetch(url, init, policy)
}

/**
 * Checks what can be checked without connecting: a parseable URL, its scheme, and an IP-literal host.
 * Returns the parsed URL or throws OutboundRefusedError. Use it to refuse a URL when it is saved; the
 * connect-time check still runs on every call.
 */
export function checkOutboundUrl(url: string | URL, policy: OutboundPolicy = STRICT): URL {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new OutboundRefusedError('not a URL', String(url))
  }
  if (parsed.protocol !== 'https:' && !(policy.allowHttp && parsed.protocol === 'http:')) {
    throw new OutboundRefusedError(policy.allowHttp ? 'only http(s) URLs' : 'only https URLs', parsed.href)
  }
  const host = bareHost(parsed)
  if (host === '') throw new OutboundRefusedError('no host', parsed.href)
  if (isIP(host) !== 0 && !addressAllowed(host, portOf(parsed), policy)) {
    throw new OutboundRefusedError(`address ${host} is not allowed`, parsed.href)
  }
  return parsed
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])
const NULL_BODY = new Set([101, 204, 205, 304])

/** fetch(url, init) under the outbound rule. Policy defaults to the strict rule. */
export async function outboundFetch(
  url: string | URL,
  init: OutboundInit = {},
  policy: OutboundPolicy = STRICT,
): Promise<Response> {
  const timeout = AbortSignal.timeout(policy.timeoutMs ?? 10_000)
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout
  let method = (init.method ?? 'GET').toUpperCase()
  const headers = new Headers(init.headers)
  let body: Buffer | undefined
  if (init.body !== undefined && init.body !== null) {
    const encoded = new Response(init.body)
    body = Buffer.from(await encoded.arrayBuffer())
    const type = encoded.headers.get('content-type')
    if (type && !headers.has('content-type')) headers.set('content-type', type)
  }
  let current = checkOutboundUrl(url, policy)
  for (let hop = 0; ; hop++) {
    const response = await exchange(current, method, headers, body, signal, policy)
    const location = response.headers.get('location')
    if (!REDIRECTS.has(response.status) || location === null || init.redirect === 'manual') {
      return response
    }
    await response.body?.cancel()
    if (init.redirect === 'error') throw new TypeError(`redirected from ${current.href}`)
    if (hop >= (policy.maxRedirects ?? 5)) throw new OutboundRefusedError('too many redirects', current.href)
    let next: URL
    try {
      next = new URL(location, current)
    } catch {
      throw new OutboundRefusedError('redirect to an unparseable location', current.href)
    }
    next = checkOutboundUrl(next, policy)
    if (response.status === 303 ? method !== 'HEAD' : response.status <= 302 && method === 'POST') {
      method = 'GET'
      body = undefined
      headers.delete('content-type')
      headers.delete('content-length')
    }
    if (next.origin !== current.origin) {
      headers.delete('authorization')
      headers.delete('cookie')
    }
    current = next
  }
}

/** One request, no redirect handling; the socket connects only to an address that passed the check. */
function exchange(
  url: URL,
  method: string,
  headers: Headers,
  body: Buffer | undefined,
  signal: AbortSignal,
  policy: OutboundPolicy,
): Promise<Response> {
  const port = portOf(url)
  const outgoing: Record<string, string> = {}
  headers.forEach((value, name) => {
    outgoing[name] = value
  })
  if (body !== undefined) outgoing['content-length'] = String(body.length)
  const transport = url.protocol === 'https:' ? https : http
  return new Promise<Response>((resolve, reject) => {
    const request = transport.request(url, {
      method,
      headers: outgoing,
      signal,
      agent: false,
      lookup: guardedLookup(policy, port) as never,
    })
    request.on('error', reject)
    request.on('response', (incoming) => {
      const status = incoming.statusCode ?? 0
      if (status < 200 || status > 599) {
        incoming.destroy()
        reject(new TypeError(`unexpected status ${status} from ${url.href}`))
        return
      }
      const responseHeaders = new Headers()
      for (let i = 0; i + 1 < incoming.rawHeaders.length; i += 2) {
        try {
          responseHeaders.append(incoming.rawHeaders[i] as string, incoming.rawHeaders[i + 1] as string)
        } catch {
          // a header fetch itself would refuse; leave it out
        }
      }
      const empty = NULL_BODY.has(status) || method === 'HEAD'
      if (empty) incoming.resume()
      const stream = empty ? null : (Readable.toWeb(incoming) as unknown as ReadableStream<Uint8Array>)
      const response = new Response(stream, {
        status,
        statusText: incoming.statusMessage ?? '',
        headers: responseHeaders,
      })
      Object.defineProperty(response, 'url', { value: url.href })
      resolve(response)
    })
    request.end(body)
  })
}

/** dns.lookup that hands node:net only the addresses the policy allows; none left → refused. */
function guardedLookup(policy: OutboundPolicy, port: number): OutboundLookup {
  const resolve = policy.lookup ?? (dnsLookup as unknown as OutboundLookup)
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) {
        callback(error, options.all ? [] : '')
        return
      }
      const list = Array.isArray(addresses) ? addresses : [{ address: addresses, family: isIP(addresses) }]
      const allowed = list.filter((entry) => addressAllowed(entry.address, port, policy))
      const first = allowed[0]
      if (first === undefined) {
        const refusal = new OutboundRefusedError(
          `${hostname} resolves to ${list.map((entry) => entry.address).join(', ')}, which is not allowed`,
          hostname,
        ) as OutboundRefusedError & NodeJS.ErrnoException
        callback(refusal, options.all ? [] : '')
        return
      }
      if (options.all) callback(null, allowed)
      else callback(null, first.address, first.family)
    })
  }
}

export function addressAllowed(address: string, port: number, policy: OutboundPolicy): boolean {
  return policy.allowPrivate || !isForbiddenAddress(address) || policy.exempt?.(address, port) === true
}

export function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
}

export function portOf(url: URL): number {
  return url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80
}

export { isForbiddenAddress } from './forbidden-addresses.js'
