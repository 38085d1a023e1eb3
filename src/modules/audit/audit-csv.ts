import { Readable } from 'node:stream'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/schema.js'
import { type AuditFilter, listAuditEvents, toAuditEventRecord } from './audit.repository.js'

/**
 * The audit trail's CSV export (docs/webhooks.md#csv-export; docs/webhooks.md): the filtered events, newest first, read
 * a page at a time by keyset and written as they are read, so an export of any length holds one page in
 * memory. Values are the events as the API shows them — secrets only ever as "********", as stored — and
 * a cell that a spreadsheet would run as a formula (= + - @, tab, CR) is prefixed with an apostrophe.
 */

/** Events read per statement. */
export const CSV_PAGE = 500

const COLUMNS = [
  'id',
  'occurred',
  'actorType',
  'actorId',
  'action',
  'tenantId',
  'targetType',
  'targetId',
  'changes',
  'requestId',
  'ip',
] as const

/** One CSV cell (RFC 4180), defused against formula injection. */
export function csvCell(value: unknown): string {
  let text =
    value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value)
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

function line(cells: readonly unknown[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`
}

async function* csvLines(db: Kysely<Database>, filter: Omit<AuditFilter, 'limit'>): AsyncGenerator<string> {
  yield line(COLUMNS)
  let afterId = filter.afterId
  for (;;) {
    const rows = await listAuditEvents(db, { ...filter, afterId, limit: CSV_PAGE })
    const page = rows.slice(0, CSV_PAGE)
    if (page.length > 0) {
      yield page
        .map((row) => {
          const e = toAuditEventRecord(row)
          return line([
            e.id,
            e.occurred,
            e.actor.type,
            e.actor.id,
            e.action,
            e.tenantId,
            e.target.type,
            e.target.id,
            e.changes,
            e.requestId,
            e.ip,
          ])
        })
        .join('')
    }
    const last = page.at(-1)
    if (rows.length <= CSV_PAGE || !last) return
    afterId = last.id
  }
}

/** The export as a stream: pulled by the response, one page read per page written. */
export function auditCsvStream(db: Kysely<Database>, filter: Omit<AuditFilter, 'limit'>): Readable {
  return Readable.from(csvLines(db, filter), { objectMode: false })
}
