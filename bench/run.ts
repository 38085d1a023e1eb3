/**
 * `npm run bench`: every operation of issue 7 against its own ceiling, on the built server as production
 * runs it. See docs/performance.md for what it measures and the latest figures.
 *
 *   BENCH_DATABASE_URL=postgres://… npm run bench -- --out bench-result.json
 *
 * With BENCH_DATABASE_URL a throw-away database is created on that server and dropped at the end;
 * without it the embedded database runs in a temporary data folder.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os'
import { parseArgs } from 'node:util'
import { arrange, call, isMissingRoute } from './lib/arrange.js'
import { type BenchDatabase, createBenchDatabase } from './lib/database.js'
import { drive } from './lib/load.js'
import {
  cpuBetween,
  cpuSeconds,
  databaseCpuSnapshot,
  freePort,
  RssSampler,
  type Service,
  startService,
} from './lib/processes.js'
import { buildReport, formatTable, type RunRecord } from './lib/report.js'
import { ceilingWorkloads, Pool, type Scenario, tenantryScenarios, type Workload } from './lib/scenarios.js'
import { insertAdministratorMembership, seedDatabase } from './lib/seed.js'

const DEFAULT_SERVER_ENTRY = 'dist/src/main.js'

/** Interleaving within a round: each scenario sits next to its ceiling; the insert one is in the middle. */
const ROUND_ORDER = [
  'ceiling-bare',
  'issue-token',
  'ceiling-select',
  'get-tenant',
  'create-tenant',
  'create-user',
  'ceiling-insert',
  'invite-user',
  'create-integration',
]

const { values: args } = parseArgs({
  options: {
    out: { type: 'string' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
    /** Seconds of warm-up before a workload's first measured window, and before later ones. */
    warmup: { type: 'string', default: '3' },
    rewarmup: { type: 'string', default: '1.5' },
    duration: { type: 'string', default: '5' },
    /** Comma-separated workload ids, to run a subset while working on one operation. */
    only: { type: 'string' },
    'server-log': { type: 'string' },
    /** Another build of the server to measure (A/B comparisons); default dist/src/main.js. */
    'server-entry': { type: 'string', default: DEFAULT_SERVER_ENTRY },
    /** Extra environment for the server, KEY=VALUE, repeatable (e.g. TENANTRY_WORKER=off). */
    'server-env': { type: 'string', multiple: true },
    /** Write V8 CPU profiles of the server and the ceiling process (node --cpu-prof) into this folder. */
    profile: { type: 'string' },
    invitees: { type: 'string' },
    logins: { type: 'string', default: '5000' },
  },
})

const number = (name: keyof typeof args) => {
  const value = Number(args[name])
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a number`)
  return value
}

const log = (message: string) => process.stderr.write(`${message}\n`)

async function main(): Promise<number> {
  const started = Date.now()
  const loadAtStart = loadavg()[0]!.toFixed(2)
  const serverEntry = args['server-entry']
  if (!existsSync(serverEntry)) throw new Error(`${serverEntry} is missing: run npm run build first`)
  const settings = {
    connections: number('connections'),
    rounds: number('rounds'),
    warmupSeconds: number('warmup'),
    rewarmupSeconds: number('rewarmup'),
    measureSeconds: number('duration'),
  }
  const cleanup: Array<() => Promise<void>> = []
  const runCleanup = async () => {
    for (const step of cleanup.splice(0).reverse()) await step().catch((e) => log(`cleanup: ${e}`))
  }
  process.once('SIGINT', () => {
    log('interrupted: cleaning up')
    void runCleanup().then(() => process.exit(130))
  })

  try {
    const database: BenchDatabase = await createBenchDatabase(process.env.BENCH_DATABASE_URL)
    cleanup.push(() => database.drop())
    log(`database: ${database.describe}`)

    const admin = { email: 'admin@bench.test', password: randomBytes(12).toString('base64url') }
    const benchUser = { email: 'tenant-admin@bench.test', password: randomBytes(12).toString('base64url') }
    const loginPassword = benchUser.password
    const invitees = args.invitees ? number('invitees') : 60_000
    const logins = number('logins')
    const seedStart = Date.now()
    const { serverVersion } = await seedDatabase(database, { admin, benchUser, logins, invitees })
    log(
      `seeded ${invitees} invitees and ${logins} login users in ${((Date.now() - seedStart) / 1000).toFixed(1)} s`,
    )

    const ceilingPort = await freePort()
    const ceiling = await startService({
      name: 'ceiling',
      args: [...profileArgs(args.profile, 'ceiling'), '--import', 'tsx', 'bench/lib/ceiling-server.ts'],
      env: {
        PORT: String(ceilingPort),
        LOG_LEVEL: 'info',
        ...('url' in database.ceiling
          ? { CEILING_DATABASE_URL: database.ceiling.url }
          : { CEILING_DATA_DIR: database.ceiling.dataDir }),
      },
      port: ceilingPort,
      readyPath: '/healthz',
    })
    cleanup.push(() => ceiling.stop())

    const serverEnv = Object.fromEntries(
      (args['server-env'] ?? []).map((pair) => [
        pair.slice(0, pair.indexOf('=')),
        pair.slice(pair.indexOf('=') + 1),
      ]),
    )
    const server = await startTenantry(serverEntry, database, admin, {
      logFile: args['server-log'],
      profileDir: args.profile,
      env: serverEnv,
    })
    cleanup.push(() => server.stop())
    const rss = new RssSampler(server.child.pid!)
    rss.start()

    const arrangement = await arrange({
      serverUrl: server.url,
      ceilingUrl: ceiling.url,
      admin,
      benchUser,
      insertMembershipDirectly:
        database.kind === 'postgres'
          ? (tenantId, email) => insertAdministratorMembership(database, tenantId, email)
          : undefined,
    })
    const pools = { invitees: new Pool(invitees), logins: new Pool(logins) }
    const problems: string[] = []
    const ceilings = ceilingWorkloads(arrangement)
    const only = args.only ? new Set(args.only.split(',')) : undefined
    const scenarios: Scenario[] = []
    for (const scenario of tenantryScenarios(arrangement, pools, loginPassword)) {
      if (only && !only.has(scenario.id)) continue
      const problem = await probe(server.url, scenario)
      if (problem) problems.push(problem)
      else scenarios.push(scenario)
    }
    const workloads = new Map<string, Workload>(
      [...scenarios, ...Object.values(ceilings)].map((w) => [w.id, w] as const),
    )
    const neededCeilings = new Set(scenarios.map((s) => `ceiling-${s.ceiling}`))
    const order = ROUND_ORDER.filter(
      (id) => workloads.has(id) && (id.startsWith('ceiling-') ? neededCeilings.has(id) || !only : true),
    )

    const records: RunRecord[] = []
    for (let round = 1; round <= settings.rounds; round += 1) {
      for (const id of order) {
        const workload = workloads.get(id)!
        const baseUrl = workload.target === 'server' ? server.url : ceiling.url
        const pid = (workload.target === 'server' ? server : ceiling).child.pid!
        let cpuAtStart = 0
        let dbCpuAtStart = new Map<number, number>()
        const dbName = database.serverDatabaseName
        rss.takeWindowPeakMb()
        const result = await drive(baseUrl, workload.next, {
          connections: settings.connections,
          warmupSeconds: round === 1 ? settings.warmupSeconds : settings.rewarmupSeconds,
          measureSeconds: settings.measureSeconds,
          beforeMeasure: () => {
            cpuAtStart = cpuSeconds(pid)
            if (dbName) dbCpuAtStart = databaseCpuSnapshot(dbName)
          },
        })
        const cpuUsPerRequest = ((cpuSeconds(pid) - cpuAtStart) * 1e6) / result.requests
        const record: RunRecord = { workloadId: id, round, result, cpuUsPerRequest }
        if (dbName) {
          const dbCpu = cpuBetween(dbCpuAtStart, databaseCpuSnapshot(dbName))
          record.dbCpuUsPerRequest = (dbCpu * 1e6) / result.requests
        }
        if (workload.target === 'server') record.serverPeakRssMb = rss.takeWindowPeakMb()
        records.push(record)
        log(
          `[${round}/${settings.rounds}] ${workload.label.padEnd(40)} ${Math.round(result.reqPerSec)
            .toString()
            .padStart(6)} req/s  p50 ${result.p50Ms} ms  p99 ${result.p99Ms} ms  ` +
            `CPU/req ${Math.round(cpuUsPerRequest)} µs` +
            (record.dbCpuUsPerRequest === undefined
              ? ''
              : ` + db ${Math.round(record.dbCpuUsPerRequest)} µs`) +
            (result.failures ? `  ${result.failures} FAILED ${JSON.stringify(result.statuses)}` : ''),
        )
      }
    }
    if (pools.invitees.exhausted) {
      problems.push(
        `the ${invitees} seeded invitees ran out (raise --invitees): repeated invitations answer 409`,
      )
    }
    if (pools.logins.exhausted) {
      problems.push(
        `the ${logins} login users ran out (raise --logins): repeats hit the verified-password cache`,
      )
    }

    const serverPeakRssMb = rss.lifetimePeakMb()
    rss.stop()
    const report = buildReport({
      scenarios,
      ceilings: Object.fromEntries(
        Object.entries(ceilings).filter(([id]) => order.includes(`ceiling-${id}`)),
      ) as typeof ceilings,
      records,
      serverPeakRssMb,
      budgetsEnforced: database.kind === 'postgres',
      machine: { ...machine(), loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadavg()[0]!.toFixed(2) },
      database:
        database.kind === 'postgres'
          ? database.describe
          : `${database.describe}, PostgreSQL ${serverVersion}`,
      settings: {
        ...settings,
        invitees,
        logins,
        ...(Object.keys(serverEnv).length ? { serverEnv: JSON.stringify(serverEnv) } : {}),
        totalSeconds: Math.round((Date.now() - started) / 1000),
      },
      problems,
    })
    process.stdout.write(`\nTenantry benchmark — ${report.database}\n`)
    process.stdout.write(
      `${report.machine.cpus} × ${report.machine.cpuModel}, ${report.machine.memoryMb} MB, Node ${report.machine.node}; ` +
        `${settings.connections} connections, medians of ${settings.rounds} runs of ${settings.measureSeconds} s\n\n`,
    )
    process.stdout.write(`${formatTable(report)}\n\n`)
    if (!report.budgetsEnforced) {
      process.stdout.write(
        '* Budgets are set for PostgreSQL: on the embedded database they are shown, not enforced.\n',
      )
    }
    for (const problem of report.problems) process.stdout.write(`FAILED: ${problem}\n`)
    for (const row of report.rows) {
      for (const sample of row.failureSamples) process.stdout.write(`  ${row.label}: ${sample}\n`)
    }
    process.stdout.write(report.passed ? 'PASSED: every budget met, no failed request\n' : '')
    if (args.out) {
      writeFileSync(args.out, `${JSON.stringify(report, null, 2)}\n`)
      log(`wrote ${args.out}`)
    }
    log(`total ${Math.round((Date.now() - started) / 1000)} s`)
    return report.passed ? 0 : 1
  } finally {
    await runCleanup()
  }
}

async function startTenantry(
  entry: string,
  database: BenchDatabase,
  admin: { email: string; password: string },
  options: { logFile: string | undefined; profileDir: string | undefined; env: Record<string, string> },
): Promise<Service> {
  const port = await freePort()
  return startService({
    name: 'tenantry',
    args: [...profileArgs(options.profileDir, 'tenantry'), entry, 'serve'],
    env: {
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      TENANTRY_DATA_DIR: database.dataDir,
      ...(database.url ? { DATABASE_URL: database.url } : {}),
      TENANTRY_SECRET_KEY: randomBytes(32).toString('base64'),
      TENANTRY_ADMIN_EMAIL: admin.email,
      TENANTRY_ADMIN_PASSWORD: admin.password,
      ...options.env,
    },
    port,
    logFile: options.logFile,
    readyPath: '/healthz',
  })
}

function profileArgs(dir: string | undefined, name: string): string[] {
  // A folder per process: with tsx, the loader thread writes a profile of its own beside the main one.
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}/${name}`] : []
}

/** One request of the scenario first: a missing route or a refusal is reported instead of measured. */
async function probe(serverUrl: string, scenario: Scenario): Promise<string | undefined> {
  const request = scenario.next()
  const token = request.headers?.authorization?.replace(/^Bearer /, '')
  const response = await call(serverUrl, request.method, request.path, {
    ...(token ? { token } : {}),
    ...(request.body !== undefined ? { body: request.body } : {}),
  })
  if (isMissingRoute(response)) return `${scenario.label}: the route does not exist in this build`
  if (response.status < 200 || response.status > 299) {
    return `${scenario.label}: probe answered ${response.status} ${JSON.stringify(response.body).slice(0, 300)}`
  }
  return undefined
}

function machine(): Record<string, string | number> {
  return {
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryMb: Math.round(totalmem() / 2 ** 20),
    node: process.version,
    kernel: release(),
  }
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    log(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
    process.exitCode = 1
  },
)
