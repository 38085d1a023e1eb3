import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'

/**
 * A webhook receiver on loopback that checks every request with the `standardwebhooks` package, against
 * each secret it holds, as a receiver in the middle of a secret rotation does. Its notion of "now" is the
 * service's clock (`now`), so a test that moves the service's clock a day on still checks timestamps with
 * the package's own five-minute tolerance.
 */
export interface ReceivedMessage {
  id: string
  timestamp: string
  signature: string
  body: any
  /** The secrets (by name) whose verification passed. */
  verifiedWith: string[]
  status: number
}

export class WebhookReceiver {
  server!: Server
  port = 0
  /** The status to answer a message that verified. */
  answer = 204
  secrets = new Map<string, string>()
  received: ReceivedMessage[] = []
  /** Requests no secret verified (answered 400). */
  unverified = 0

  constructor(private readonly now: () => Date = () => new Date()) {}

  async start(port = 0): Promise<this> {
    this.server = createServer((request, response) => {
      let raw = ''
      request.on('data', (chunk) => {
        raw += chunk
      })
      request.on('end', () => {
        const headers = headersOf(request.headers)
        const verifiedWith = [...this.secrets].filter(([, secret]) => this.#verifies(secret, raw, headers))
        const status = verifiedWith.length > 0 ? this.answer : 400
        if (verifiedWith.length === 0) this.unverified += 1
        this.received.push({
          id: headers['webhook-id'] ?? '',
          timestamp: headers['webhook-timestamp'] ?? '',
          signature: headers['webhook-signature'] ?? '',
          body: safeJson(raw),
          verifiedWith: verifiedWith.map(([name]) => name),
          status,
        })
        response.statusCode = status
        response.end()
      })
    })
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve))
    this.port = (this.server.address() as AddressInfo).port
    return this
  }

  /** The standardwebhooks verifier, its timestamp tolerance measured from the service's clock. */
  #verifies(secret: string, raw: string, headers: Record<string, string>): boolean {
    const at = this.now().getTime()
    const realNow = Date.now
    Date.now = () => at
    try {
      new Webhook(secret).verify(raw, headers)
      return true
    } catch {
      return false
    } finally {
      Date.now = realNow
    }
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections?.()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`
  }
}

function headersOf(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]),
  )
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}
