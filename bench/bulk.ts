/**
 * `npm run bench:bulk`: 100,000 generated users through the NDJSON form of POST /v1/users on the built
 * server, against the raw ceiling measured in the same run (bench/bulk-ceiling.ts), with the server's
 * memory. `--rows 1000000` then repeats with a million rows on the same server, to show memory stays flat.
 *
 *   BENCH_DATABASE_URL=postgres://… npm run bench:bulk [-- --rows 1000000]
 *
 * With BENCH_DATABASE_URL (or TEST_DATABASE_URL) throw-away databases are created on that server and
 * dropped at the end; without, the embedded database runs in temporary data folders.
 */
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { request } from 'node:http'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { databaseCpuSeconds, generatedUser, measureCeiling } from './bulk-ceiling.js'
import { type BenchDatabase, createBenchDatabase } from './lib/database.js'
import { cpuSeconds, RssSampler, type Service } from './lib/processes.js'
import { startTenantry } from './lib/services.js'

const SERVER_ENTRY = 'dist/src/main.js'
const BASE_ROWS = 100_000
const WARM_UP_ROWS = 2_000

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: String(BASE_ROWS) },
    'server-log': { type: 'string' },
    /** Write a V8 CPU profile of the server (node --cpu-prof) into this folder. */
    profile: { type: 'string' },
    /** NODE_OPTIONS for the server, e.g. '--max-semi-space-size=32' to see how V8 heap sizing moves RSS. */
    'node-options': { type: 'string' },
    /** Flags for the server's node that NODE_OPTIONS refuses, e.g. '--trace-gc' (with --server-log). */
    'node-flags': { type: 'string' },
  },
})
const log = (message: string) => process.stderr.write(`${message}\n`)
const mb = (value: number) => `${value.toFixed(0)} MB`

interface ImportResult {
  seconds: number
  created: number
  failed: number
  answered: number
}

/**
 * Streams `rows` generated users to the server while reading its answers, the way `tenantry users import`
 * does: lines are generated as the connection takes them (nothing is held), answers are counted by
 * status without building objects, and the summary line is checked at the end.
 */
function importUsers(
  url: string,
  token: string,
  run: string,
  rows: number,
  onAnswered: (answered: number) => void = () => {},
): Promise<ImportResult> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const req = request(`${url}/v1/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
    })
    let next = 0
    const pump = () => {
      while (next < rows) {
        let chunk = ''
        const end = Math.min(next + 500, rows)
        for (; next < end; next++) chunk += `${JSON.stringify(generatedUser(run, next))}\n`
        if (!req.write(chunk)) return void req.once('drain', pump)
      }
      req.end()
    }
    req.on('error', reject)
    req.on('response', (res) => {
      if (res.statusCode !== 200) return reject(new Error(`import answered ${res.statusCode}`))
      let carry = ''
      let answered = 0
      let summary: { created: number; failed: number; total: number } | undefined
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        const text = carry + chunk
        const lastNewline = text.lastIndexOf('\n')
        carry = text.slice(lastNewline + 1)
        let at = text.indexOf('{"index":')
        while (at !== -1 && at < lastNewline) {
          answered += 1
          at = text.indexOf('{"index":', at + 9)
        }
        onAnswered(answered)
        const summaryAt = text.lastIndexOf('{"summary"')
        if (summaryAt !== -1) summary = JSON.parse(text.slice(summaryAt, lastNewline)).summary
      })
      res.on('end', () => {
        if (!summary) return reject(new Error('the answer ended without a summary line'))
        const seconds = (performance.now() - started) / 1000
        resolve({ seconds, created: summary.created, failed: summary.failed, answered })
      })
    })
    pump()
  })
}

/** CHECKPOINT on a server database (a no-op for the embedded one): each measurement starts clean. */
async function checkpoint(url: string | undefined): Promise<void> {
  if (!url) return
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query('checkpoint')
  } catch (error) {
    log(`checkpoint skipped: ${error instanceof Error ? error.message : String(error)}`)
  } finally {
    await client.end()
  }
}

/** The server as production runs it, with this run's profile, log and extra node settings. */
function startServer(database: BenchDatabase, admin: { email: string; password: string }): Promise<Service> {
  return startTenantry(database, admin, {
    serverEntry: SERVER_ENTRY,
    serverLog: args['server-log'],
    profileDir: args.profile,
    serverEnv: args['node-options'] ? { NODE_OPTIONS: args['node-options'] } : {},
    nodeFlags: args['node-flags']?.split(' ').filter((flag) => flag !== '') ?? [],
    readyTimeoutMs: 120_000,
  })
}

async function main(): Promise<number> {
  if (!existsSync(SERVER_ENTRY)) throw new Error(`${SERVER_ENTRY} is missing: run npm run build first`)
  const rows = Number(args.rows)
  if (!Number.isInteger(rows) || rows < 1) throw new Error('--rows must be a positive integer')
  const sizes = rows === BASE_ROWS ? [BASE_ROWS] : [Math.min(BASE_ROWS, rows), rows]
  const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL
  const cleanup: Array<() => Promise<unknown>> = []
  try {
    const database = await createBenchDatabase(serverUrl)
    cleanup.push(() => database.drop())
    const ceilingDatabase = await createBenchDatabase(serverUrl)
    cleanup.push(() => ceilingDatabase.drop())
    log(`database: ${database.describe}; load average at start ${loadavg()[0]!.toFixed(2)}`)

    const admin = { email: 'admin@bench.test', password: randomBytes(12).toString('base64url') }
    const server = await startServer(database, admin)
    cleanup.unshift(() => server.stop())
    const tokenResponse = await fetch(`${server.url}/v1/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: admin.email, password: admin.password }),
    })
    const { token } = (await tokenResponse.json()) as { token: string }
    const rss = new RssSampler(server.child.pid!)
    rss.start(100)

    // Warm up the code paths (JIT, caches) so the baseline is the server's steady state.
    await importUsers(server.url, token, 'warm', WARM_UP_ROWS)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const baselineMb = rss.takeWindowPeakMb()
    log(`server RSS after warm-up: ${mb(baselineMb)}`)

    const lines: string[] = []
    for (const [step, size] of sizes.entries()) {
      const run = `r${step}`
      const ceilingTarget = ceilingDatabase.url
        ? { url: ceilingDatabase.url }
        : { dataDir: `${ceilingDatabase.dataDir}-${step}` }
      log(`ceiling: ${size} rows by INSERT … SELECT FROM unnest …`)
      await checkpoint(database.url)
      const ceiling = await measureCeiling(ceilingTarget, run, size)
      // The ceiling leaves its rows' WAL and dirty pages behind; flushed here, they do not slow the
      // import's commits (each batch's commit waits for its WAL to reach the disk).
      await checkpoint(database.url)
      log(`import: ${size} rows over HTTP (NDJSON) …`)
      const before = rss.takeWindowPeakMb()
      const databaseBefore = await databaseCpuSeconds(database.url)
      const cpuBefore = { server: cpuSeconds(server.child.pid!), bench: process.cpuUsage() }
      // The highest RSS in each stretch of 100,000 rows: flat memory reads as a flat series.
      const stretches: number[] = []
      const result = await importUsers(server.url, token, run, size, (answered) => {
        if (answered >= (stretches.length + 1) * BASE_ROWS) stretches.push(rss.takeWindowPeakMb())
      })
      const serverCpu = cpuSeconds(server.child.pid!) - cpuBefore.server
      const benchCpu = process.cpuUsage(cpuBefore.bench)
      const databaseAfter = await databaseCpuSeconds(database.url)
      const databaseCpu =
        databaseBefore === undefined || databaseAfter === undefined
          ? undefined
          : databaseAfter - databaseBefore
      const peakMb = Math.max(rss.takeWindowPeakMb(), ...stretches)
      if (result.created !== size || result.answered !== size) {
        throw new Error(`expected ${size} created and answered, got ${JSON.stringify(result)}`)
      }
      const usersPerSecond = result.created / result.seconds
      lines.push(
        [
          `${size.toLocaleString('en-US')} users`,
          `${Math.round(usersPerSecond).toLocaleString('en-US')} users/s (${result.seconds.toFixed(1)} s)`,
          `ceiling ${Math.round(ceiling.rowsPerSecond).toLocaleString('en-US')} rows/s (${ceiling.seconds.toFixed(1)} s)`,
          `ratio ${((usersPerSecond / ceiling.rowsPerSecond) * 100).toFixed(0)} %`,
          `server RSS before ${mb(before)}, peak ${mb(peakMb)}, growth ${mb(peakMb - baselineMb)}`,
          `CPU µs/row: server ${((serverCpu / size) * 1e6).toFixed(0)}` +
            (databaseCpu === undefined ? '' : `, database ${((databaseCpu / size) * 1e6).toFixed(0)}`) +
            `, this client ${((benchCpu.user + benchCpu.system) / size).toFixed(0)}`,
        ].join(' | '),
      )
      if (stretches.length > 1) {
        lines.push(`  server RSS peak per 100,000 rows: ${stretches.map((v) => v.toFixed(0)).join(', ')} MB`)
      }
      log(lines.at(-1)!)
    }
    rss.stop()
    process.stdout.write(
      `\nBulk load over HTTP vs raw INSERT … SELECT FROM unnest (${database.describe}):\n` +
        `${lines.map((line) => `  ${line}`).join('\n')}\n` +
        `  server peak RSS over its life: ${mb(rss.lifetimePeakMb())}; load average now ${loadavg()[0]!.toFixed(2)}\n`,
    )
    return 0
  } finally {
    for (const step of cleanup) await step().catch((error) => log(`cleanup: ${error}`))
  }
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    log(`bench:bulk failed: ${error instanceof Error ? error.stack : String(error)}`)
    process.exitCode = 1
  },
)
