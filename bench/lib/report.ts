import type { LoadResult } from './load.js'
import type { Budget, CeilingId, Scenario, Workload } from './scenarios.js'

export const RSS_BUDGET_MB = 250

/** One measured window of one workload. */
export interface RunRecord {
  workloadId: string
  round: number
  result: LoadResult
  /** CPU time the serving process (server or ceiling) spent per measured request, in µs. */
  cpuUsPerRequest: number
  /** CPU time of the PostgreSQL backends per request, in µs (server database only). */
  dbCpuUsPerRequest?: number
  /** The server's highest RSS seen during the window (scenarios only). */
  serverPeakRssMb?: number
  /** Of the mail the window's requests queued (Scenario.mailKind), how much was sent by its end. */
  mail?: MailDelivery
}

export interface MailDelivery {
  queued: number
  sentByWindowEnd: number
}

export interface Row {
  id: string
  label: string
  kind: 'scenario' | 'ceiling'
  runs: number
  /** Medians over the runs. */
  reqPerSec: number
  p50Ms: number
  p99Ms: number
  /** CPU time of the serving process per request (the database's own is not counted), in µs. */
  cpuUsPerRequest: number
  /** CPU time of the PostgreSQL backends per request, in µs (server database only). */
  dbCpuUsPerRequest?: number
  /** Non-2xx responses and connection errors over every run, warm-ups included. */
  failures: number
  statuses: Record<string, number>
  failureSamples: string[]
  ceiling?: CeilingId
  /** Median over the rounds of this round's req/s / the ceiling's req/s in the same round. */
  ratio?: number
  /** Median over the rounds of this round's p99 / the ceiling's p99 in the same round. */
  p99Factor?: number
  budget?: { text: string; met: boolean }
  /**
   * The ratio budget as CPU per request (medians over the rounds): what the scenario spent, server and
   * database together, and what its ratio allows — the paired ceiling's CPU over the budget's ratio. The
   * machine is CPU-bound, so this names the cut a missed budget needs (docs/performance.md); the load
   * generator's share of the cores is left out, so it is an estimate.
   */
  cpuBudget?: { spentUs: number; allowedUs: number }
  /**
   * Beside the budget, the scenario's reference ceiling (Scenario.reference): the scenario's req/s over
   * it, and its own req/s over the budget's ceiling — how much of a missed budget is the work's own.
   */
  reference?: { ceiling: CeilingId; ratio: number; referenceRatio: number }
  /** Scenario.compareWith: median over the rounds of this req/s over the other scenario's, and the target. */
  against?: { scenario: string; ratio: number; minRatio: number; met: boolean }
  note?: string
  serverPeakRssMb?: number
}

export interface Report {
  generatedAt: string
  machine: Record<string, string | number>
  database: string
  settings: Record<string, number | string>
  rows: Row[]
  /** Every measured window, in the order they ran. */
  runs: Array<{
    workload: string
    round: number
    reqPerSec: number
    p50Ms: number
    p99Ms: number
    failures: number
    cpuUsPerRequest: number
    dbCpuUsPerRequest?: number
    serverPeakRssMb?: number
    mail?: MailDelivery
  }>
  serverPeakRssMb: number
  rss: { budgetMb: number; met: boolean }
  /** Budgets are set for PostgreSQL; on the embedded database they are shown, not enforced. */
  budgetsEnforced: boolean
  problems: string[]
  passed: boolean
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

function summarise(workload: Workload, records: RunRecord[]): Row {
  const runs = records.filter((r) => r.workloadId === workload.id)
  const statuses: Record<string, number> = {}
  for (const run of runs) {
    for (const [code, count] of Object.entries(run.result.statuses))
      statuses[code] = (statuses[code] ?? 0) + count
  }
  const peaks = runs.map((r) => r.serverPeakRssMb).filter((v): v is number => v !== undefined)
  return {
    id: workload.id,
    label: workload.label,
    kind: workload.target === 'server' ? 'scenario' : 'ceiling',
    runs: runs.length,
    reqPerSec: median(runs.map((r) => r.result.reqPerSec)),
    p50Ms: median(runs.map((r) => r.result.p50Ms)),
    p99Ms: median(runs.map((r) => r.result.p99Ms)),
    cpuUsPerRequest: median(runs.map((r) => r.cpuUsPerRequest)),
    ...(runs.some((r) => r.dbCpuUsPerRequest !== undefined)
      ? { dbCpuUsPerRequest: median(runs.map((r) => r.dbCpuUsPerRequest ?? Number.NaN)) }
      : {}),
    failures: runs.reduce((sum, r) => sum + r.result.failures, 0),
    statuses,
    failureSamples: runs.flatMap((r) => r.result.failureSamples).slice(0, 3),
    ...(peaks.length ? { serverPeakRssMb: Math.max(...peaks) } : {}),
  }
}

/**
 * Each round's run of a scenario with the same round's run of its ceiling. The machine is shared: load
 * from elsewhere drifts over tens of seconds, so a scenario is compared with the ceiling measured next
 * to it rather than with a ceiling measured minutes apart.
 */
function pairedRuns(
  records: RunRecord[],
  scenarioId: string,
  ceilingId: string,
): Array<[RunRecord, RunRecord]> {
  const pairs: Array<[RunRecord, RunRecord]> = []
  for (const run of records.filter((r) => r.workloadId === scenarioId)) {
    const ceiling = records.find((r) => r.workloadId === ceilingId && r.round === run.round)
    if (ceiling) pairs.push([run, ceiling])
  }
  return pairs
}

/** A window's CPU per request: the serving process's and, on a server database, PostgreSQL's. */
function totalCpuUs(run: RunRecord): number {
  return run.cpuUsPerRequest + (run.dbCpuUsPerRequest ?? 0)
}

function budgetText(budget: Budget): string {
  const parts = [`≥ ${Math.round(budget.minRatio * 100)}%`]
  if (budget.maxP99Factor !== undefined) parts.push(`p99 ≤ ${budget.maxP99Factor}×`)
  return parts.join(', ')
}

export function buildReport(input: {
  scenarios: Scenario[]
  ceilings: Record<CeilingId, Workload>
  records: RunRecord[]
  serverPeakRssMb: number
  budgetsEnforced: boolean
  machine: Record<string, string | number>
  database: string
  settings: Record<string, number | string>
  problems: string[]
}): Report {
  const ceilingRows = {} as Record<CeilingId, Row>
  for (const [id, workload] of Object.entries(input.ceilings) as [CeilingId, Workload][]) {
    ceilingRows[id] = summarise(workload, input.records)
  }
  const problems = [...input.problems]
  const scenarioRows = input.scenarios.map((scenario) => {
    const row = summarise(scenario, input.records)
    row.ceiling = scenario.ceiling
    const pairs = pairedRuns(input.records, scenario.id, input.ceilings[scenario.ceiling].id)
    row.ratio = median(pairs.map(([s, c]) => s.result.reqPerSec / c.result.reqPerSec))
    row.p99Factor = median(pairs.map(([s, c]) => s.result.p99Ms / c.result.p99Ms))
    if (scenario.note) row.note = scenario.note
    const reference = scenario.reference ? input.ceilings[scenario.reference] : undefined
    if (scenario.reference && reference) {
      const own = pairedRuns(input.records, scenario.id, reference.id)
      const its = pairedRuns(input.records, reference.id, input.ceilings[scenario.ceiling].id)
      if (own.length > 0 && its.length > 0) {
        row.reference = {
          ceiling: scenario.reference,
          ratio: median(own.map(([s, c]) => s.result.reqPerSec / c.result.reqPerSec)),
          referenceRatio: median(its.map(([r, c]) => r.result.reqPerSec / c.result.reqPerSec)),
        }
      }
    }
    if (scenario.compareWith) {
      const { scenario: other, minRatio } = scenario.compareWith
      const ratio = median(
        pairedRuns(input.records, scenario.id, other).map(
          ([s, o]) => s.result.reqPerSec / o.result.reqPerSec,
        ),
      )
      row.against = { scenario: other, ratio, minRatio, met: ratio >= minRatio }
      if (!row.against.met && input.budgetsEnforced) {
        problems.push(
          `${row.label}: ${Math.round(ratio * 100)}% of ${other}, below ${Math.round(minRatio * 100)}%`,
        )
      }
    }
    if (scenario.budget) {
      const { minRatio, maxP99Factor } = scenario.budget
      const met = row.ratio >= minRatio && (maxP99Factor === undefined || row.p99Factor <= maxP99Factor)
      row.budget = { text: budgetText(scenario.budget), met }
      row.cpuBudget = {
        spentUs: median(pairs.map(([s]) => totalCpuUs(s))),
        allowedUs: median(pairs.map(([, c]) => totalCpuUs(c) / minRatio)),
      }
      if (!met && input.budgetsEnforced) {
        problems.push(`${row.label}: budget missed (${row.budget.text} of the ${scenario.ceiling} ceiling)`)
      }
    }
    return row
  })
  const rows = [...scenarioRows, ...Object.values(ceilingRows)]
  for (const row of rows) {
    if (row.failures > 0) {
      problems.push(`${row.label}: ${row.failures} non-2xx/errors ${JSON.stringify(row.statuses)}`)
    }
  }
  const rssMet = input.serverPeakRssMb <= RSS_BUDGET_MB
  if (!rssMet && input.budgetsEnforced) {
    problems.push(`server peak RSS ${input.serverPeakRssMb.toFixed(0)} MB > ${RSS_BUDGET_MB} MB`)
  }
  return {
    generatedAt: new Date().toISOString(),
    machine: input.machine,
    database: input.database,
    settings: input.settings,
    rows,
    runs: input.records.map((r) => ({
      workload: r.workloadId,
      round: r.round,
      reqPerSec: r.result.reqPerSec,
      p50Ms: r.result.p50Ms,
      p99Ms: r.result.p99Ms,
      failures: r.result.failures,
      cpuUsPerRequest: r.cpuUsPerRequest,
      ...(r.dbCpuUsPerRequest === undefined ? {} : { dbCpuUsPerRequest: r.dbCpuUsPerRequest }),
      ...(r.serverPeakRssMb === undefined ? {} : { serverPeakRssMb: r.serverPeakRssMb }),
      ...(r.mail === undefined ? {} : { mail: r.mail }),
    })),
    serverPeakRssMb: input.serverPeakRssMb,
    rss: { budgetMb: RSS_BUDGET_MB, met: rssMet },
    budgetsEnforced: input.budgetsEnforced,
    problems,
    passed: problems.length === 0,
  }
}

const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–')
const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 1 : 0) : '–')

/** The one table: scenarios first, then the ceilings they are compared with. */
export function formatTable(report: Report): string {
  const header = [
    'operation',
    'req/s',
    'p50 ms',
    'p99 ms',
    'non-2xx',
    'vs ceiling',
    'ratio',
    'p99 ×',
    'budget',
    'met',
    'RSS MB',
    'CPU µs/req',
    'DB CPU µs/req',
  ]
  const lines = report.rows.map((row) => [
    row.label,
    int(row.reqPerSec),
    ms(row.p50Ms),
    ms(row.p99Ms),
    String(row.failures),
    row.ceiling ?? '',
    row.ratio === undefined ? '' : `${Math.round(row.ratio * 100)}%`,
    row.p99Factor === undefined ? '' : row.p99Factor.toFixed(2),
    row.budget?.text ?? (row.kind === 'scenario' ? 'none' : ''),
    row.budget ? (row.budget.met ? 'yes' : report.budgetsEnforced ? 'NO' : 'no*') : '',
    row.serverPeakRssMb === undefined ? '' : int(row.serverPeakRssMb),
    int(row.cpuUsPerRequest),
    row.dbCpuUsPerRequest === undefined ? '' : int(row.dbCpuUsPerRequest),
  ])
  const rssLine = [
    'server peak RSS (VmHWM, whole run)',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    `≤ ${report.rss.budgetMb} MB`,
    report.rss.met ? 'yes' : report.budgetsEnforced ? 'NO' : 'no*',
    int(report.serverPeakRssMb),
    '',
    '',
  ]
  const all = [header, ...lines, rssLine]
  const widths = header.map((_, i) => Math.max(...all.map((line) => line[i]!.length)))
  const numeric = new Set([1, 2, 3, 4, 6, 7, 10, 11, 12])
  const render = (line: string[]) =>
    line.map((cell, i) => (numeric.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ')
  const rule = widths.map((w) => '-'.repeat(w)).join('  ')
  return [render(header), rule, ...lines.map(render), rule, render(rssLine)].join('\n')
}

/** One line per scenario with a reference ceiling measured: how far it is from it, and it from the budget's ceiling. */
export function formatReferences(report: Report): string[] {
  const pct = (ratio: number) => `${Math.round(ratio * 100)} %`
  return report.rows.flatMap((row) =>
    row.reference && row.ceiling
      ? [
          `  ${row.label}: ${pct(row.reference.ratio)} of the ${row.reference.ceiling} ceiling, ` +
            `which itself runs at ${pct(row.reference.referenceRatio)} of the ${row.ceiling} ceiling`,
        ]
      : [],
  )
}

/** One line per budgeted scenario: the CPU per request it spent, against what its ratio budget allows. */
export function formatCpuBudgets(report: Report): string[] {
  return report.rows.flatMap((row) =>
    row.cpuBudget
      ? [
          `  ${row.label}: ${int(row.cpuBudget.spentUs)} µs spent, ${int(row.cpuBudget.allowedUs)} allowed` +
            (row.cpuBudget.spentUs > row.cpuBudget.allowedUs
              ? ` (${Math.round(100 * (1 - row.cpuBudget.allowedUs / row.cpuBudget.spentUs))} % to cut)`
              : ''),
        ]
      : [],
  )
}

/** One line per scenario held to another (Scenario.compareWith): its rate as a share of the other's. */
export function formatComparisons(report: Report): string[] {
  return report.rows.flatMap((row) =>
    row.against && Number.isFinite(row.against.ratio)
      ? [
          `  ${row.label}: ${Math.round(row.against.ratio * 100)} % of ${row.against.scenario}'s rate ` +
            `(target ≥ ${Math.round(row.against.minRatio * 100)} %${row.against.met ? ', met' : ', MISSED'})`,
        ]
      : [],
  )
}
