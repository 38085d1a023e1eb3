/**
 * The address ranges the outbound rule never connects to (docs/webhooks.md#the-outbound-rule): loopback, private, link-local,
 * cloud metadata and the other special-purpose ranges, IPv4 and IPv6 (with IPv4 embedded in IPv6).
 */
import { isIP } from 'node:net'

interface Range {
  bytes: number[]
  prefix: number
}

const V4_FORBIDDEN = [
  '0.0.0.0/8', // "this network"
  '10.0.0.0/8', // private
  '100.64.0.0/10', // CGNAT (and Alibaba's metadata 100.100.100.200)
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local (and the metadata address 169.254.169.254)
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments (Oracle's metadata 192.0.0.192)
  '192.0.2.0/24', // documentation
  '192.88.99.0/24', // 6to4 relay anycast
  '192.168.0.0/16', // private
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation
  '203.0.113.0/24', // documentation
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, broadcast
  '168.63.129.16/32', // Azure's platform (wire server) address
].map(parseRange)

const V6_FORBIDDEN = [
  '::/96', // unspecified, loopback, IPv4-compatible
  '100::/64', // discard
  '2001::/23', // IETF protocol assignments (Teredo, ORCHID, …)
  '2001:db8::/32', // documentation
  '3fff::/20', // documentation
  '5f00::/16', // SRv6 SIDs
  '64:ff9b:1::/48', // local-use NAT64
  'fc00::/7', // unique local (AWS metadata fd00:ec2::254)
  'fe80::/10', // link-local
  'fec0::/10', // site-local (deprecated)
  'ff00::/8', // multicast
].map(parseRange)

/** IPv6 prefixes that carry an IPv4 address in their last 32 bits: the IPv4 rule decides. */
const V6_EMBEDDING_V4 = ['::ffff:0:0/96', '::ffff:0:0:0/96', '64:ff9b::/96'].map(parseRange)
const V6_6TO4 = parseRange('2002::/16')

/** True when an IP address (v4 or v6 text) is in a range the outbound rule forbids, or is not an IP. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return V4_FORBIDDEN.some((range) => inRange(parseIPv4(address), range))
  if (family !== 6) return true
  const bytes = parseIPv6(address)
  if (V6_EMBEDDING_V4.some((range) => inRange(bytes, range))) return forbiddenV4Bytes(bytes.slice(12, 16))
  if (inRange(bytes, V6_6TO4)) return forbiddenV4Bytes(bytes.slice(2, 6))
  return V6_FORBIDDEN.some((range) => inRange(bytes, range))
}

function forbiddenV4Bytes(bytes: number[]): boolean {
  return V4_FORBIDDEN.some((range) => inRange(bytes, range))
}

function parseRange(cidr: string): Range {
  const [address = '', prefix = ''] = cidr.split('/')
  return { bytes: isIP(address) === 4 ? parseIPv4(address) : parseIPv6(address), prefix: Number(prefix) }
}

function inRange(bytes: number[], range: Range): boolean {
  if (bytes.length !== range.bytes.length) return false
  let bits = range.prefix
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff
    if (((bytes[i] ?? 0) & mask) !== ((range.bytes[i] ?? 0) & mask)) return false
  }
  return true
}

function parseIPv4(address: string): number[] {
  return address.split('.').map(Number)
}

/** 16 bytes of a valid IPv6 text (zone id dropped, a trailing dotted quad allowed). */
function parseIPv6(address: string): number[] {
  let text = (address.split('%')[0] ?? '').toLowerCase()
  const dotted = text.lastIndexOf(':')
  if (text.includes('.', dotted)) {
    const [a = 0, b = 0, c = 0, d = 0] = parseIPv4(text.slice(dotted + 1))
    text = `${text.slice(0, dotted + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = '', tail] = text.split('::')
  const headGroups = head === '' ? [] : head.split(':')
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups =
    tail === undefined
      ? headGroups
      : [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups]
  return groups.flatMap((group) => {
    const value = Number.parseInt(group, 16)
    return [value >> 8, value & 0xff]
  })
}
