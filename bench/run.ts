/**
 * `npm run bench`: every operation of issue 7 against its own ceiling, on the built server as production
 * runs it. See docs/performance.md for what it measures, the options and the latest figures.
 *
 *   BENCH_DATABASE_URL=postgres://… npm run bench -- --out bench-result.json
 *
 * With BENCH_DATABASE_URL a throw-away database is created on that server and dropped at the end;
 * without it the embedded database runs in a temporary data folder.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os'
import { keyId } from '../src/crypto/keys.js'
import { newTotpKey } from '../src/modules/mfa/totp.js'
import { arrange, call, isMissingRoute } from './lib/arrange.js'
import { createBenchDatabase } from './lib/database.js'
import { parseOptions } from './lib/options.js'
import { RssSampler } from './lib/processes.js'
import {
  buildReport,
  formatComparisons,
  formatCpuBudgets,
  formatReferences,
  formatTable,
  type Report,
} from './lib/report.js'
import { mailShare, ROUND_ORDER, runRounds } from './lib/rounds.js'
import { ceilingWorkloads, Pool, type Scenario, tenantryScenarios, type Workload } from './lib/scenarios.js'
import { seedDatabase } from './lib/seed.js'
import { startCeiling, startTenantry } from './lib/services.js'

const log = (message: string) => process.stderr.write(`${message}\n`)

async function main(): Promise<number> {
  const started = Date.now()
  const loadAtStart = loadavg()[0]!.toFixed(2)
  const options = parseOptions(process.argv.slice(2))
  if (!existsSync(options.serverEntry)) {
    throw new Error(`${options.serverEntry} is missing: run npm run build first`)
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
    const database = await createBenchDatabase(process.env.BENCH_DATABASE_URL)
    cleanup.push(() => database.drop())
    log(`database: ${database.describe}`)

    const admin = { email: 'admin@bench.test', password: randomBytes(12).toString('base64url') }
    const benchUser = { email: 'tenant-admin@bench.test', password: randomBytes(12).toString('base64url') }
    const { invitees, logins } = options
    // The server's secret key, chosen here: the seeded authenticator apps' key is sealed with it.
    const secretKey = randomBytes(32)
    const totp = { secret: newTotpKey(), keys: { secretKey, secretKeyId: keyId(secretKey) } }
    const seedStart = Date.now()
    const { serverVersion } = await seedDatabase(database, { admin, benchUser, logins, invitees, totp })
    log(
      `seeded ${invitees} invitees and ${logins} login users in ${((Date.now() - seedStart) / 1000).toFixed(1)} s`,
    )

    const ceiling = await startCeiling(database, options.profileDir)
    cleanup.push(() => ceiling.stop())
    const server = await startTenantry(database, admin, {
      ...options,
      serverEnv: { TENANTRY_SECRET_KEY: secretKey.toString('base64'), ...options.serverEnv },
    })
    cleanup.push(() => server.stop())
    const rss = new RssSampler(server.child.pid!)
    rss.start()

    const arrangement = await arrange({ serverUrl: server.url, ceilingUrl: ceiling.url, admin, benchUser })
    // The login users share the bench user's password (seed.ts).
    const pools = { invitees: new Pool(invitees), logins: new Pool(logins), mfaLogins: new Pool(logins) }
    const problems: string[] = []
    const scenarios: Scenario[] = []
    for (const scenario of tenantryScenarios(arrangement, pools, benchUser.password, totp.secret)) {
      if (options.only && !options.only.has(scenario.id)) continue
      const problem = await probe(server.url, scenario)
      if (problem) problems.push(problem)
      else scenarios.push(scenario)
    }
    const ceilings = ceilingWorkloads(arrangement, pools)
    const workloads = new Map<string, Workload>(
      [...scenarios, ...Object.values(ceilings)].map((w) => [w.id, w] as const),
    )
    // A reference ceiling works on Tenantry's tables, which only a server database shares with it.
    const neededCeilings = new Set(
      scenarios.flatMap((s) => [
        ceilings[s.ceiling].id,
        ...(s.reference && database.kind === 'postgres' ? [ceilings[s.reference].id] : []),
      ]),
    )
    const order = ROUND_ORDER.filter(
      (id) => workloads.has(id) && (!id.startsWith('ceiling-') || neededCeilings.has(id)),
    )

    const records = await runRounds({
      order,
      workloads,
      server,
      ceiling,
      rss,
      databaseName: database.serverDatabaseName,
      databaseUrl: database.url,
      options,
      log,
    })
    if (pools.invitees.exhausted) {
      problems.push(
        `the ${invitees} seeded invitees ran out (raise --invitees): repeated invitations answer 409`,
      )
    }
    if (pools.logins.exhausted || pools.mfaLogins.exhausted) {
      problems.push(
        `the ${logins} login users ran out (raise --logins): repeats hit the verified-password cache, and a code is taken once`,
      )
    }

    const serverPeakRssMb = rss.lifetimePeakMb()
    rss.stop()
    const report = buildReport({
      scenarios,
      ceilings: Object.fromEntries(
        Object.entries(ceilings).filter(([, workload]) => order.includes(workload.id)),
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
        connections: options.connections,
        rounds: options.rounds,
        warmupSeconds: options.warmupSeconds,
        rewarmupSeconds: options.rewarmupSeconds,
        measureSeconds: options.measureSeconds,
        invitees,
        logins,
        ...(Object.keys(options.serverEnv).length ? { serverEnv: JSON.stringify(options.serverEnv) } : {}),
        totalSeconds: Math.round((Date.now() - started) / 1000),
      },
      problems,
    })
    print(report, options.rounds, options.measureSeconds, options.connections)
    if (options.out) {
      writeFileSync(options.out, `${JSON.stringify(report, null, 2)}\n`)
      log(`wrote ${options.out}`)
    }
    log(`total ${Math.round((Date.now() - started) / 1000)} s`)
    return report.passed ? 0 : 1
  } finally {
    await runCleanup()
  }
}

/** One operation of the scenario first: a missing route or a refusal is reported instead of measured. */
async function probe(serverUrl: string, scenario: Scenario): Promise<string | undefined> {
  const context: Record<string, unknown> = {}
  for (const step of scenario.steps ?? [{ build: scenario.next, expect: 0 }]) {
    const request = step.build(context)
    const token = request.headers?.authorization?.replace(/^Bearer /, '')
    const response = await call(serverUrl, request.method, request.path, {
      ...(token ? { token } : {}),
      ...(request.body !== undefined ? { body: request.body } : {}),
    })
    if (isMissingRoute(response)) return `${scenario.label}: the route does not exist in this build`
    const right = step.expect
      ? response.status === step.expect
      : response.status >= 200 && response.status < 300
    if (!right) {
      return `${scenario.label}: probe answered ${response.status} ${JSON.stringify(response.body).slice(0, 300)}`
    }
    step.read?.(JSON.stringify(response.body), context)
  }
  return undefined
}

function print(report: Report, rounds: number, measureSeconds: number, connections: number): void {
  const out = (text: string) => process.stdout.write(`${text}\n`)
  out(`\nTenantry benchmark — ${report.database}`)
  out(
    `${report.machine.cpus} × ${report.machine.cpuModel}, ${report.machine.memoryMb} MB, Node ${report.machine.node}; ` +
      `${connections} connections; medians of ${rounds} runs of ${measureSeconds} s; ` +
      'ratio and p99 × compare each run with its ceiling in the same round\n',
  )
  out(`${formatTable(report)}\n`)
  if (!report.budgetsEnforced) {
    out('* Budgets are set for PostgreSQL: on the embedded database they are shown, not enforced.')
  }
  // A heading and its indented lines, when there are any.
  const section = (heading: string, lines: string[]) => {
    if (lines.length === 0) return
    out(heading)
    for (const line of lines) out(line)
  }
  section(
    "Against the ceiling of the same work with none of Tenantry's code (req/s ratio, and that ceiling's own " +
      "ratio to the budget ceiling; medians of the rounds' pairs):",
    formatReferences(report),
  )
  section('Against another scenario, round by round (medians of the pairs):', formatComparisons(report))
  section(
    "CPU per request, server + database, against what each ratio budget allows (the paired ceiling's " +
      "CPU ÷ the ratio; the load generator's share left out):",
    formatCpuBudgets(report),
  )
  const mailRuns = report.runs.filter((run) => run.mail)
  if (mailRuns.length > 0) {
    const shares = mailRuns.map((run) => `${run.workload} ${mailShare(run.mail!)}`).join(', ')
    out(`Mail queued in each window and sent by its end (the rest is not in its figures): ${shares}`)
  }
  for (const problem of report.problems) out(`FAILED: ${problem}`)
  for (const row of report.rows) {
    for (const sample of row.failureSamples) out(`  ${row.label}: ${sample}`)
  }
  if (report.passed) out('PASSED: every budget met, no failed request')
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
