import autocannon, { type AutocannonRequest } from 'autocannon'

/** One HTTP request as a scenario builds it; called once per request so bodies can be unique. */
export interface RequestShape {
  method: 'GET' | 'POST'
  path: string
  headers?: Record<string, string>
  body?: unknown
}

export type RequestFactory = () => RequestShape

export interface LoadOptions {
  connections: number
  warmupSeconds: number
  measureSeconds: number
  /** Called between the warm-up and the measured window. */
  beforeMeasure?: () => void
}

/** What one measured window produced. Non-2xx and errors also count the warm-up's. */
export interface LoadResult {
  reqPerSec: number
  p50Ms: number
  p99Ms: number
  requests: number
  /** Non-2xx responses plus connection errors (timeouts included), warm-up included. */
  failures: number
  statuses: Record<string, number>
  /** The first few non-2xx bodies, to say why. */
  failureSamples: string[]
}

const MAX_SAMPLES = 3

/**
 * Drives `baseUrl` with autocannon: a warm-up (same requests, results kept only for failures), then the
 * measured window. Every request is built by `next()`, so unique names and e-mails stay unique across
 * both phases.
 */
export async function drive(
  baseUrl: string,
  next: RequestFactory,
  options: LoadOptions,
): Promise<LoadResult> {
  const failureSamples: string[] = []
  const request = {
    setupRequest: (defaults: AutocannonRequest) => {
      const shape = next()
      const headers: Record<string, string> = { ...defaults.headers, ...shape.headers }
      const built: AutocannonRequest = { ...defaults, method: shape.method, path: shape.path, headers }
      if (shape.body !== undefined) {
        headers['content-type'] = 'application/json'
        built.body = JSON.stringify(shape.body)
      } else {
        built.body = Buffer.alloc(0)
      }
      return built
    },
    onResponse: (status: number, body: string) => {
      if ((status < 200 || status > 299) && failureSamples.length < MAX_SAMPLES) {
        failureSamples.push(`${status} ${body.slice(0, 300)}`)
      }
    },
  }
  const run = (duration: number) =>
    autocannon({ url: baseUrl, connections: options.connections, duration, timeout: 20, requests: [request] })

  const warmup = options.warmupSeconds > 0 ? await run(options.warmupSeconds) : undefined
  options.beforeMeasure?.()
  const measured = await run(options.measureSeconds)

  const statuses: Record<string, number> = {}
  for (const result of [warmup, measured]) {
    for (const [code, { count }] of Object.entries(result?.statusCodeStats ?? {})) {
      statuses[code] = (statuses[code] ?? 0) + count
    }
  }
  const failures = [warmup, measured].reduce(
    (sum, r) => sum + (r ? r.non2xx + r.errors : 0), // errors include timeouts
    0,
  )
  return {
    reqPerSec: measured.requests.total / measured.duration,
    p50Ms: measured.latency.p50,
    p99Ms: measured.latency.p99,
    requests: measured.requests.total,
    failures,
    statuses,
    failureSamples,
  }
}
