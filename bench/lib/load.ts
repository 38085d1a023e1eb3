import autocannon, { type AutocannonRequest } from 'autocannon'

/** One HTTP request as a scenario builds it; called once per request so bodies can be unique. */
export interface RequestShape {
  method: 'GET' | 'POST'
  path: string
  headers?: Record<string, string>
  body?: unknown
}

export type RequestFactory = () => RequestShape

/**
 * One request of an operation that takes several (a sign-in with a second factor: the password, then the
 * code), built from what the steps before it read from their answers, kept per connection in `context`.
 */
export interface RequestStep {
  build(context: Record<string, unknown>): RequestShape
  /** The status this step answers when all is well; any other counts as a failure. */
  expect: number
  /** Reads what a later step needs from this one's answer. */
  read?(body: string, context: Record<string, unknown>): void
}

export interface LoadOptions {
  connections: number
  warmupSeconds: number
  measureSeconds: number
  /** Called between the warm-up and the measured window. */
  beforeMeasure?: () => void
}

/** What one measured window produced. Non-2xx and errors also count the warm-up's. */
export interface LoadResult {
  /** Requests a second; for a workload of several steps, operations (each of every step) a second. */
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
  next: RequestFactory | RequestStep[],
  options: LoadOptions,
): Promise<LoadResult> {
  const failureSamples: string[] = []
  const sample = (status: number, body: string) => {
    if (failureSamples.length < MAX_SAMPLES) failureSamples.push(`${status} ${body.slice(0, 300)}`)
  }
  const steps: RequestStep[] = Array.isArray(next) ? next : [{ build: next, expect: 200 }]
  // A single request: any non-2xx fails. Several steps: each must answer its own expected status.
  let unexpected = 0
  const requests = steps.map((step) => ({
    setupRequest: (defaults: AutocannonRequest, context: Record<string, unknown>) =>
      built(defaults, step.build(context)),
    onResponse: (status: number, body: string, context: Record<string, unknown>) => {
      if (!Array.isArray(next)) {
        if (status < 200 || status > 299) sample(status, body)
      } else if (status !== step.expect) {
        unexpected += 1
        sample(status, body)
      } else step.read?.(body, context)
    },
  }))
  const run = (duration: number) =>
    autocannon({ url: baseUrl, connections: options.connections, duration, timeout: 20, requests })

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
    // errors include timeouts
    (sum, r) => sum + (r ? (Array.isArray(next) ? 0 : r.non2xx) + r.errors : 0),
    Array.isArray(next) ? unexpected : 0,
  )
  const operations = measured.requests.total / steps.length
  return {
    reqPerSec: operations / measured.duration,
    p50Ms: measured.latency.p50,
    p99Ms: measured.latency.p99,
    requests: operations,
    failures,
    statuses,
    failureSamples,
  }
}

function built(defaults: AutocannonRequest, shape: RequestShape): AutocannonRequest {
  const headers: Record<string, string> = { ...defaults.headers, ...shape.headers }
  const request: AutocannonRequest = { ...defaults, method: shape.method, path: shape.path, headers }
  if (shape.body !== undefined) {
    headers['content-type'] = 'application/json'
    request.body = JSON.stringify(shape.body)
  } else {
    request.body = Buffer.alloc(0)
  }
  return request
}
