import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import {
  checkOutboundUrl,
  isForbiddenAddress,
  type OutboundLookup,
  type OutboundPolicy,
  OutboundRefusedError,
  outboundFetch,
  outboundPolicy,
} from '../../src/http/outbound.js'

/** A loopback server that counts the requests that reach it. */
interface Peer {
  server: Server
  port: number
  hits: string[]
}

async function startPeer(host: string, handler?: Parameters<typeof createServer>[1]): Promise<Peer> {
  const hits: string[] = []
  const server = createServer((request, response) => {
    hits.push(`${request.method} ${request.url}`)
    if (handler) return handler(request, response)
    let body = ''
    request.on('data', (chunk) => {
      body += chunk
    })
    request.on('end', () => {
      response.setHeader('content-type', 'application/json')
      response.setHeader('x-peer', 'yes')
      response.end(JSON.stringify({ method: request.method, body }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  return { server, port: (server.address() as AddressInfo).port, hits }
}

const closePeer = (peer: Peer) => new Promise<void>((resolve) => peer.server.close(() => resolve()))

/** Plain http allowed (the test peers have no certificate); the address rule on. */
const HTTP_ONLY: OutboundPolicy = { allowHttp: true, allowPrivate: false }
const OPEN: OutboundPolicy = { allowHttp: true, allowPrivate: true }

async function refusal(promise: Promise<unknown>): Promise<OutboundRefusedError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(OutboundRefusedError)
  return error as OutboundRefusedError
}

describe('the outbound rule (docs/webhooks.md#the-outbound-rule)', () => {
  let v4: Peer
  let v6: Peer
  beforeAll(async () => {
    v4 = await startPeer('127.0.0.1')
    v6 = await startPeer('::1')
  })
  afterAll(async () => {
    await closePeer(v4)
    await closePeer(v6)
  })

  it('reaches a peer when the rule is relaxed, through a standard Response', async () => {
    const response = await outboundFetch(
      `http://127.0.0.1:${v4.port}/hello`,
      { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } },
      OPEN,
    )
    expect(response).toBeInstanceOf(Response)
    expect(response.status).toBe(200)
    expect(response.headers.get('x-peer')).toBe('yes')
    expect(await response.json()).toEqual({ method: 'POST', body: '{"a":1}' })
    expect(response.url).toBe(`http://127.0.0.1:${v4.port}/hello`)
  })

  it('refuses http:// unless TENANTRY_OUTBOUND_ALLOW_HTTP', async () => {
    const before = v4.hits.length
    await refusal(outboundFetch(`http://127.0.0.1:${v4.port}/`, {}, { allowHttp: false, allowPrivate: true }))
    await refusal(outboundFetch(`http://127.0.0.1:${v4.port}/`))
    expect(v4.hits.length).toBe(before)
    expect(() => checkOutboundUrl('ftp://example.com/')).toThrow(OutboundRefusedError)
    expect(() => checkOutboundUrl('file:///etc/passwd', OPEN)).toThrow(OutboundRefusedError)
    expect(checkOutboundUrl('https://example.com/hook').hostname).toBe('example.com')
  })

  it('refuses loopback addresses: 127.0.0.1, ::1, IPv4-mapped and numeric spellings, nothing reaches the peer', async () => {
    const before4 = v4.hits.length
    const before6 = v6.hits.length
    await refusal(outboundFetch(`http://127.0.0.1:${v4.port}/`, {}, HTTP_ONLY))
    await refusal(outboundFetch(`http://[::1]:${v6.port}/`, {}, HTTP_ONLY))
    await refusal(outboundFetch(`http://[::ffff:127.0.0.1]:${v4.port}/`, {}, HTTP_ONLY))
    await refusal(outboundFetch(`http://2130706433:${v4.port}/`, {}, HTTP_ONLY))
    await refusal(outboundFetch(`http://0x7f.1:${v4.port}/`, {}, HTTP_ONLY))
    expect(v4.hits.length).toBe(before4)
    expect(v6.hits.length).toBe(before6)
    // the same addresses are reachable with the rule relaxed: the refusal above is the rule, not the network
    expect((await outboundFetch(`http://[::1]:${v6.port}/`, {}, OPEN)).status).toBe(200)
  })

  it('refuses private, link-local and cloud-metadata addresses without connecting', async () => {
    for (const url of [
      'https://10.0.0.1/',
      'https://10.255.1.2:8443/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[fd00:ec2::254]/latest/meta-data/',
      'https://100.100.100.200/',
      'https://192.168.1.1/',
      'https://[fe80::1]/',
      'https://[::ffff:a9fe:a9fe]/',
    ]) {
      const error = await refusal(outboundFetch(url))
      expect(error.message).toMatch(/not allowed/)
    }
  })

  it('checks the resolved address at connect time: a name resolving to loopback is refused', async () => {
    const before = v4.hits.length
    await refusal(outboundFetch(`http://localhost:${v4.port}/`, {}, HTTP_ONLY))
    // DNS rebinding: the name resolved to a public address when saved; now it answers 127.0.0.1
    let answers = 0
    const rebinding: OutboundLookup = (_hostname, options, callback) => {
      answers++
      const entry = { address: '127.0.0.1', family: 4 }
      if (options.all) callback(null, [entry])
      else callback(null, entry.address, entry.family)
    }
    expect(() => checkOutboundUrl(`http://rebind.test:${v4.port}/`, HTTP_ONLY)).not.toThrow()
    const error = await refusal(
      outboundFetch(`http://rebind.test:${v4.port}/`, {}, { ...HTTP_ONLY, lookup: rebinding }),
    )
    expect(error.message).toMatch(/rebind\.test resolves to 127\.0\.0\.1/)
    expect(answers).toBeGreaterThan(0)
    expect(v4.hits.length).toBe(before)
    // the very same resolver, rule relaxed, does connect: the hook is what stood in the way
    const response = await outboundFetch(`http://rebind.test:${v4.port}/`, {}, { ...OPEN, lookup: rebinding })
    expect(response.status).toBe(200)
  })

  it('re-checks every redirect: a redirect to loopback is refused', async () => {
    const target = await startPeer('127.0.0.1')
    const redirector = await startPeer('127.0.0.1', (_request, response) => {
      response.statusCode = 302
      response.setHeader('location', `http://127.0.0.1:${target.port}/internal`)
      response.end()
    })
    try {
      // only the redirecting peer is let through (it stands for a public server)
      const policy: OutboundPolicy = { ...HTTP_ONLY, exempt: (_a, port) => port === redirector.port }
      const error = await refusal(outboundFetch(`http://127.0.0.1:${redirector.port}/`, {}, policy))
      expect(error.message).toMatch(/not allowed/)
      expect(redirector.hits).toHaveLength(1)
      expect(target.hits).toHaveLength(0)

      // with both let through the redirect is followed (so the refusal above was the re-check)
      const both: OutboundPolicy = { ...HTTP_ONLY, exempt: () => true }
      const followed = await outboundFetch(
        `http://127.0.0.1:${redirector.port}/`,
        { method: 'POST', body: 'x' },
        both,
      )
      expect(followed.status).toBe(200)
      expect(await followed.json()).toEqual({ method: 'GET', body: '' })
      expect(target.hits).toEqual(['GET /internal'])

      const manual = await outboundFetch(`http://127.0.0.1:${redirector.port}/`, { redirect: 'manual' }, both)
      expect(manual.status).toBe(302)
    } finally {
      await closePeer(target)
      await closePeer(redirector)
    }
  })

  it('gives up after a bounded number of redirects', async () => {
    const loop = await startPeer('127.0.0.1', (_request, response) => {
      response.statusCode = 307
      response.setHeader('location', '/again')
      response.end()
    })
    try {
      const error = await refusal(
        outboundFetch(`http://127.0.0.1:${loop.port}/`, {}, { ...OPEN, maxRedirects: 3 }),
      )
      expect(error.message).toMatch(/too many redirects/)
      expect(loop.hits).toHaveLength(4)
    } finally {
      await closePeer(loop)
    }
  })

  it('classifies addresses', () => {
    for (const address of [
      '127.0.0.1',
      '127.1.2.3',
      '0.0.0.0',
      '10.1.2.3',
      '100.64.0.1',
      '172.16.5.4',
      '172.31.255.255',
      '192.168.0.10',
      '169.254.169.254',
      '224.0.0.1',
      '255.255.255.255',
      '::',
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '::127.0.0.1',
      '64:ff9b::a9fe:a9fe',
      '2002:7f00:1::1',
      'fc00::1',
      'fd00:ec2::254',
      'fe80::1%eth0',
      'ff02::1',
      'not-an-ip',
    ]) {
      expect(isForbiddenAddress(address), address).toBe(true)
    }
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '172.32.0.1',
      '100.128.0.1',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      '2002:808:808::1',
    ]) {
      expect(isForbiddenAddress(address), address).toBe(false)
    }
  })

  it('reads TENANTRY_OUTBOUND_ALLOW_HTTP and TENANTRY_OUTBOUND_ALLOW_PRIVATE', () => {
    expect(outboundPolicy(loadConfig({}))).toEqual({ allowHttp: false, allowPrivate: false })
    expect(
      outboundPolicy(
        loadConfig({ TENANTRY_OUTBOUND_ALLOW_HTTP: 'true', TENANTRY_OUTBOUND_ALLOW_PRIVATE: 'true' }),
      ),
    ).toEqual({ allowHttp: true, allowPrivate: true })
    expect(() => loadConfig({ TENANTRY_OUTBOUND_ALLOW_PRIVATE: 'yes' })).toThrow(
      /TENANTRY_OUTBOUND_ALLOW_PRIVATE/,
    )
  })
})
