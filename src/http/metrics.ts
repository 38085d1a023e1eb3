import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { type Kysely, sql } from 'kysely'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import type { Database } from '../db/schema.js'
import { fixedShapeLines } from '../logger.js'

/**
 * Prometheus metrics (docs/operations.md#metrics lists them for a dashboard).
 *
 * Process-wide counters that domain code bumps (login failures, rate-limit refusals, bulk rows) live in
 * one registry; what describes one app — its requests, its pool, its outbox — is registered per app, and
 * the outbox and pool figures are read at scrape time, so they cost nothing between scrapes. The
 * per-request cost is one histogram observation through a cached child (no label hashing per request).
 */
export const processMetrics = new Registry()

// The standard Node.js process series (CPU, resident memory, heap by space, event-loop lag, GC, open
// handles, nodejs_version_info) that the usual Node dashboards and alerts read; registered once per
// process, since they describe the process, not one app (docs/operations.md, "Metrics").
collectDefaultMetrics({ register: processMetrics })

export const loginFailures = new Counter({
  name: 'tenantry_login_failures_total',
  help: 'Failed logins (password or API key secret), by credential kind',
  labelNames: ['kind'] as const,
  registers: [processMetrics],
})

export const rateLimited = new Counter({
  name: 'tenantry_rate_limited_total',
  help: 'Requests refused with 429 by a rate or failure limit, by limit',
  labelNames: ['limit'] as const,
  registers: [processMetrics],
})

export const bulkRows = new Counter({
  name: 'tenantry_bulk_rows_total',
  help: 'Rows processed by bulk user loads, by outcome (created, failed) and dry run',
  labelNames: ['outcome', 'dry_run'] as const,
  registers: [processMetrics],
})

/** Writes per statement of the writes that share one when they arrive together (db/statement-batcher.ts). */
export const batchedStatementSize = new Histogram({
  name: 'tenantry_batched_statement_size',
  help: 'Writes in one statement, by kind of write (concurrent writes share one; 1 when unhurried)',
  labelNames: ['write'] as const,
  buckets: [1, 2, 4, 8, 16],
  registers: [processMetrics],
})

/** Routes whose requests are logged at debug and kept out of the request metrics' noise. */
export const PROBE_ROUTES = new Set(['/healthz', '/readyz', '/metrics'])

export interface PoolStats {
  total: number
  idle: number
  waiting: number
  max: number
}

export interface MetricsOptions {
  db: Kysely<Database>
  /** The server pool's figures; undefined with the embedded database (one connection). */
  poolStats?: () => PoolStats
  /** The app's clock, for the outbox's age. */
  now: () => number
}

const BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/**
 * Registers GET /metrics and the onResponse hook that logs one line per request and times it.
 * Logging and timing share the hook: one hook per request, not two.
 */
export function registerMetricsAndRequestLog(app: FastifyInstance, options: MetricsOptions): void {
  const registry = new Registry()
  const duration = new Histogram({
    name: 'tenantry_http_request_duration_seconds',
    help: 'HTTP request latency in seconds, by method, route pattern and status (its _count is the request count)',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: BUCKETS,
    registers: [registry],
  })
  const children = new Map<string, ReturnType<typeof duration.labels>>()
  // The request line holds only what the req/res serializers pick (method, URL with its tokens cut out,
  // address, status; logger.ts): a fixed shape, written without redaction, naming its request as
  // request.log's lines do.
  const requestLines = fixedShapeLines(app.log)

  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done) => {
    const route = request.routeOptions.url ?? '(unmatched)'
    const status = reply.statusCode
    const seconds = reply.elapsedTime / 1000
    const key = `${request.method} ${route} ${status}`
    let child = children.get(key)
    if (!child) {
      child = duration.labels(request.method, route, String(status))
      children.set(key, child)
    }
    child.observe(seconds)
    const line = {
      reqId: request.id,
      req: request,
      res: reply,
      responseTime: Math.round(reply.elapsedTime * 10) / 10,
    }
    if (PROBE_ROUTES.has(route)) requestLines.debug(line, 'request completed')
    else requestLines.info(line, 'request completed')
    done()
  })

  if (options.poolStats) {
    const stats = options.poolStats
    new Gauge({
      name: 'tenantry_db_pool_connections',
      help: 'Database pool connections, by state (in_use, idle, waiting requests, max)',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const s = stats()
        this.set({ state: 'in_use' }, s.total - s.idle)
        this.set({ state: 'idle' }, s.idle)
        this.set({ state: 'waiting' }, s.waiting)
        this.set({ state: 'max' }, s.max)
      },
    })
  }

  const outboxMessages = new Gauge({
    name: 'tenantry_outbox_messages',
    help: 'Outbox rows by kind and status: queued is the depth; sent and failed count deliveries by outcome',
    labelNames: ['kind', 'status'] as const,
    registers: [registry],
  })
  const outboxAge = new Gauge({
    name: 'tenantry_outbox_oldest_queued_age_seconds',
    help: 'Age of the oldest queued outbox row, by kind (0 when none is queued)',
    labelNames: ['kind'] as const,
    registers: [registry],
  })

  app.get('/metrics', { schema: { hide: true }, config: { auth: 'public' } }, async (_request, reply) => {
    outboxMessages.reset()
    outboxAge.reset()
    const rows = await sql<{ kind: string; status: string; count: string; oldest: Date | null }>`
      select kind, status, count(*)::text as count, min(created) as oldest from outbox group by kind, status
    `.execute(options.db)
    const now = options.now()
    for (const row of rows.rows) {
      outboxMessages.set({ kind: row.kind, status: row.status }, Number(row.count))
      if (row.status === 'queued' && row.oldest) {
        outboxAge.set({ kind: row.kind }, Math.max(0, (now - new Date(row.oldest).getTime()) / 1000))
      }
    }
    const text = `${await registry.metrics()}\n${await processMetrics.metrics()}`
    return reply.type(registry.contentType).send(text)
  })
}
