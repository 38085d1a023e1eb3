/**
 * The ceilings: what Fastify, the logger and the database allow on this machine, with none of Tenantry's
 * work. Run as its own process, like the server, with the server's logger settings (pino at LOG_LEVEL,
 * Fastify request logging on):
 *   GET  /bare          constant JSON
 *   POST /insert        one INSERT … RETURNING of a tenant-sized row (same columns and indexes as tenants)
 *   GET  /select/:id    one SELECT by primary key of such a row
 *   POST /invitation    an invitation's required writes and mail, on Tenantry's tables (ceiling-invitation.ts;
 *                       PostgreSQL only)
 * The database is the server's (CEILING_DATABASE_URL, through `pg`, the same pool size as the server) or,
 * for the embedded case, a PGlite of its own in CEILING_DATA_DIR, in this process.
 */
import Fastify, { type FastifyBaseLogger } from 'fastify'
import pg from 'pg'
import { uuidv7 } from 'uuidv7'
import { createLogger, fixedShapeLines } from '../../src/logger.js'
import { invitationCeiling } from './ceiling-invitation.js'

type Query = (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>

const TABLE = `
  create table if not exists bench_ceiling_tenants (
    id uuid primary key,
    name text not null,
    name_key text not null,
    description text not null default '',
    region_id uuid not null,
    parent_id uuid not null,
    parent_ids uuid[] not null,
    admin_user_id uuid not null,
    active boolean not null default true,
    timezone text not null default 'UTC',
    default_identity_provider text,
    cxengage_identity_provider text not null default 'enabled',
    client_log_level text,
    outbound_integration_id text,
    capacity_rule_id uuid,
    created timestamptz not null,
    created_by uuid not null,
    updated timestamptz not null,
    updated_by uuid not null,
    constraint bench_ceiling_tenants_name_key_key unique (name_key)
  )`
const INDEXES = [
  'create index if not exists bench_ceiling_tenants_parent_idx on bench_ceiling_tenants (parent_id, created, id)',
  'create index if not exists bench_ceiling_tenants_region_idx on bench_ceiling_tenants (region_id)',
]

const INSERT = `
  insert into bench_ceiling_tenants (id, name, name_key, description, region_id, parent_id, parent_ids,
    admin_user_id, active, timezone, cxengage_identity_provider, created, created_by, updated, updated_by)
  values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
  returning *`

interface CeilingDatabase {
  query: Query
  /** On a PostgreSQL server: the pool, and a pool of two for the invitation ceiling's mail (as the server's worker has). */
  pools?: { requests: pg.Pool; mail: pg.Pool }
  close(): Promise<void>
}

async function openQuery(): Promise<CeilingDatabase> {
  const url = process.env.CEILING_DATABASE_URL
  if (url) {
    const pool = new pg.Pool({ connectionString: url, max: 10 })
    const mail = new pg.Pool({ connectionString: url, max: 2 })
    return {
      query: async (text, params) => (await pool.query(text, params)).rows,
      pools: { requests: pool, mail },
      close: async () => {
        await pool.end()
        await mail.end()
      },
    }
  }
  const dataDir = process.env.CEILING_DATA_DIR
  if (!dataDir) throw new Error('set CEILING_DATABASE_URL or CEILING_DATA_DIR')
  const { PGlite } = await import('@electric-sql/pglite')
  const pglite = await PGlite.create({ dataDir })
  return {
    query: async (text, params) => (await pglite.query<Record<string, unknown>>(text, params)).rows,
    close: () => pglite.close(),
  }
}

async function main(): Promise<void> {
  const { query, pools, close } = await openQuery()
  await query(TABLE)
  for (const index of INDEXES) await query(index)

  const logger = createLogger((process.env.LOG_LEVEL ?? 'info') as 'info')
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger })
  const constant = { result: { ok: true, service: 'ceiling' } }
  // Fixed like a parent tenant's: the row differs only in its id and name.
  const parentId = uuidv7()
  const parentIds = [uuidv7(), parentId]
  const regionId = uuidv7()

  app.get('/healthz', async () => ({ ok: true }))
  app.get('/bare', async () => constant)
  app.post<{ Body: { name: string; description?: string } }>('/insert', async (request, reply) => {
    const actor = uuidv7()
    const now = new Date()
    const name = request.body.name.trim()
    const [row] = await query(INSERT, [
      uuidv7(),
      name,
      name.toLowerCase(),
      request.body.description ?? '',
      regionId,
      parentId,
      parentIds,
      actor,
      true,
      'UTC',
      'enabled',
      now,
      actor,
      now,
      actor,
    ])
    return reply.code(201).send({ result: row })
  })
  app.get<{ Params: { id: string } }>('/select/:id', async (request, reply) => {
    const [row] = await query('select * from bench_ceiling_tenants where id = $1', [request.params.id])
    return row ? { result: row } : reply.code(404).send({ error: 'not found' })
  })

  const stopInvitations = pools
    ? invitationCeiling(app, pools.requests, pools.mail, fixedShapeLines(logger))
    : undefined

  await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
  const shutdown = async () => {
    await app.close()
    await stopInvitations?.()
    await close()
    process.exit(0)
  }
  process.once('SIGTERM', shutdown)
  process.once('SIGINT', shutdown)
}

main().catch((error: unknown) => {
  process.stderr.write(`ceiling server: ${error instanceof Error ? error.stack : String(error)}\n`)
  process.exit(1)
})
