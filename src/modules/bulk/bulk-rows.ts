import type { Actor } from '../../access/actor.js'
import { newId } from '../../crypto/uuid7.js'
import type { NewUserRow } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { currentRequest } from '../../http/request-context.js'
import { auditActorColumns } from '../audit/audit.repository.js'
import type { UserCreatedEvents } from './bulk.repository.js'
import type { BulkItemResult } from './bulk.schemas.js'
import type { PlannedMembership } from './bulk-memberships.js'
import { MAX_DRY_RUN_ROWS } from './seen-emails.js'

/** The rows of a bulk load (bulk-loader.ts) on their way: prepared, or with their outcome known. */

/** A row that passed every check that needs no write: ready to be inserted. */
export class PreparedRow {
  constructor(
    readonly index: number,
    readonly row: NewUserRow,
    readonly membership: PlannedMembership | undefined,
  ) {}
}

/** A row whose outcome is known (it failed a check, or was written): its line of the answer. */
export type RowOutcome = BulkItemResult

export type PendingRow = PreparedRow | RowOutcome

/**
 * The creation time shared by a batch's rows. Every answer formats it (created, updated) with
 * toISOString; the text is the same for the whole batch, so it is computed once.
 */
export class BatchInstant extends Date {
  #iso: string | undefined
  override toISOString(): string {
    this.#iso ??= super.toISOString()
    return this.#iso
  }
}

export function failedRow(index: number, error: AppError): RowOutcome {
  return {
    index,
    status: error.statusCode,
    error: {
      code: error.statusCode,
      reason: error.reason,
      message: error.message,
      ...(error.attribute ? { attribute: error.attribute } : {}),
    },
  }
}

export function dryRunTooLong(): AppError {
  return new AppError(
    'too_many_items',
    `A dry run checks at most ${MAX_DRY_RUN_ROWS.toLocaleString('en-US')} rows (each e-mail against every earlier row of the request); check the rest in a dry run of their own`,
  )
}

export function emailTaken(email: string, earlierIndex?: number): AppError {
  const where = earlierIndex === undefined ? '' : ` (row ${earlierIndex} of this request)`
  return new AppError('email_taken', `A user with e-mail "${email}" already exists${where}`, {
    email: 'already exists',
  })
}

/** The shared columns of a batch's `user.created` events, and one id per row. */
export function userCreatedEvents(rows: number, occurred: Date, actor: Actor): UserCreatedEvents {
  const request = currentRequest()
  return {
    // UUIDv7 from the process's generator (newId), in row order: the trail lists a batch in input order.
    ids: Array.from({ length: rows }, () => newId()),
    occurred,
    actor: auditActorColumns(actor),
    requestId: request?.requestId ?? null,
    ip: request?.ip ?? null,
  }
}
