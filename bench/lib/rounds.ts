import { withClient } from './database.js'
import { drive } from './load.js'
import type { BenchOptions } from './options.js'
import { cpuBetween, cpuSeconds, databaseCpuSnapshot, type RssSampler, type Service } from './processes.js'
import type { MailDelivery, RunRecord } from './report.js'
import type { Workload } from './scenarios.js'

/**
 * One round: each scenario next to its ceiling, the insert ceiling amid the four writes that share it.
 * Every round runs the same order, so each scenario runs `rounds` times interleaved with its ceiling.
 */
export const ROUND_ORDER = [
  'ceiling-bare',
  'issue-token',
  'token-mfa',
  'ceiling-select',
  'get-tenant',
  'scim-find-user',
  'create-tenant',
  'create-user',
  'ceiling-insert',
  'invite-user',
  'ceiling-invitation',
  'create-integration',
  'scim-create-user',
]

export interface RoundsInput {
  order: string[]
  workloads: Map<string, Workload>
  server: Service
  ceiling: Service
  rss: RssSampler
  /** The bench database's name on a PostgreSQL server, to measure its backends' CPU. */
  databaseName: string | undefined
  /** Its URL: how much of a window's mail went out is read there (server database only). */
  databaseUrl: string | undefined
  options: BenchOptions
  log(message: string): void
}

export async function runRounds(input: RoundsInput): Promise<RunRecord[]> {
  const { options } = input
  const records: RunRecord[] = []
  for (let round = 1; round <= options.rounds; round += 1) {
    for (const id of input.order) {
      const workload = input.workloads.get(id)!
      const service = workload.target === 'server' ? input.server : input.ceiling
      const pid = service.child.pid!
      let cpuAtStart = 0
      let dbCpuAtStart = new Map<number, number>()
      let windowStart = new Date()
      input.rss.takeWindowPeakMb()
      const result = await drive(service.url, workload.steps ?? workload.next, {
        connections: options.connections,
        warmupSeconds: round === 1 ? options.warmupSeconds : options.rewarmupSeconds,
        measureSeconds: options.measureSeconds,
        beforeMeasure: () => {
          windowStart = new Date()
          cpuAtStart = cpuSeconds(pid)
          if (input.databaseName) dbCpuAtStart = databaseCpuSnapshot(input.databaseName)
        },
      })
      const cpuUsPerRequest = ((cpuSeconds(pid) - cpuAtStart) * 1e6) / result.requests
      const { mailKind } = workload
      const mail =
        mailKind && input.databaseUrl
          ? await mailDelivery(input.databaseUrl, mailKind, windowStart, new Date())
          : undefined
      const record: RunRecord = { workloadId: id, round, result, cpuUsPerRequest }
      if (input.databaseName) {
        const dbCpu = cpuBetween(dbCpuAtStart, databaseCpuSnapshot(input.databaseName))
        record.dbCpuUsPerRequest = (dbCpu * 1e6) / result.requests
      }
      if (workload.target === 'server') record.serverPeakRssMb = input.rss.takeWindowPeakMb()
      if (mail) record.mail = mail
      records.push(record)
      input.log(progressLine(record, workload, options.rounds))
    }
  }
  return records
}

function progressLine(record: RunRecord, workload: Workload, rounds: number): string {
  const { result } = record
  const parts = [
    `[${record.round}/${rounds}] ${workload.label.padEnd(40)} ${String(Math.round(result.reqPerSec)).padStart(6)} req/s`,
    `p50 ${result.p50Ms} ms  p99 ${result.p99Ms} ms`,
    `CPU/req ${Math.round(record.cpuUsPerRequest)} µs` +
      (record.dbCpuUsPerRequest === undefined ? '' : ` + db ${Math.round(record.dbCpuUsPerRequest)} µs`),
  ]
  if (record.serverPeakRssMb !== undefined) parts.push(`RSS ${Math.round(record.serverPeakRssMb)} MB`)
  if (record.mail) parts.push(`mail sent by the window's end ${mailShare(record.mail)}`)
  if (result.failures) parts.push(`${result.failures} FAILED ${JSON.stringify(result.statuses)}`)
  return parts.join('  ')
}

/**
 * Of the mail of `kind` queued in [from, to), how much was sent at `to`, read straight after the window:
 * delivery that lags leaves its cost out of the window's figures.
 */
async function mailDelivery(url: string, kind: string, from: Date, to: Date): Promise<MailDelivery> {
  const { rows } = await withClient(url, (client) =>
    client.query<{ queued: string; sent: string }>(
      `select count(*) as queued, count(*) filter (where status = 'sent' and sent_at <= $3) as sent
         from outbox where kind = $1 and created >= $2 and created < $3`,
      [kind, from, to],
    ),
  )
  return { queued: Number(rows[0]!.queued), sentByWindowEnd: Number(rows[0]!.sent) }
}

export function mailShare(mail: MailDelivery): string {
  return mail.queued === 0 ? '–' : `${Math.round((100 * mail.sentByWindowEnd) / mail.queued)} %`
}
