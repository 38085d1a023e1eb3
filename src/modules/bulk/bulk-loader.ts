import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'
import { newId } from '../../crypto/uuid7.js'
import type { UserRow } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { bulkRows } from '../../http/metrics.js'
import { compileBodyValidator } from '../../http/validation.js'
import { invitationLimits } from '../memberships/invitation-limits.js'
import { inviterName } from '../memberships/invitation-token.js'
import { loadRoleCatalog } from '../roles/roles.service.js'
import { buildNewUserRow, type NewUserEnv } from '../users/user-rules.js'
import { platformPermissionsOf } from '../users/user-visibility.js'
import { toUser } from '../users/users.service.js'
import {
  findTakenEmails,
  insertUsers,
  insertUsersSkippingTakenEmails,
  type LongTexts,
  type StoredUser,
} from './bulk.repository.js'
import { type BulkSummary, type BulkUserInput, BulkUserItem } from './bulk.schemas.js'
import { BulkMemberships, insertUsersWithMemberships } from './bulk-memberships.js'
import {
  BatchInstant,
  dryRunTooLong,
  emailTaken,
  failedRow,
  type PendingRow,
  PreparedRow,
  type RowOutcome,
  userCreatedEvents,
} from './bulk-rows.js'
import { MAX_DRY_RUN_ROWS, SeenEmails } from './seen-emails.js'

export { type PendingRow, PreparedRow, type RowOutcome } from './bulk-rows.js'

const validateItem = compileBodyValidator(BulkUserItem)
/** A server database's URL, as app.ts tells it from the embedded one's. */
const SERVER_DATABASE = /^postgres(ql)?:\/\//

/**
 * The bulk load of platform users (docs/api.md#bulk-load-of-platform-users), shared by the JSON-array and the NDJSON forms. A row is
 * judged exactly as a single create is — the same body schema, the same `buildNewUserRow` rules (e-mail,
 * E.164, platform roles, the role ceiling) — and, when it names a tenant, the same membership rules as an
 * invitation. Checks that need no write run in `prepare`, one row at a time; `write` then stores a whole
 * batch in one multi-row INSERT, in which an e-mail that is already taken is that row's 409, never the
 * batch's failure. No password is hashed: bulk rows carry none (users set one on accepting an invitation).
 * Every row written leaves the audit events a single create (and an invitation) leaves, in its batch's
 * transaction; a dry run writes none.
 *
 * Each batch commits on its own, so an interrupted load keeps what it wrote, and a re-run reports those
 * rows as already existing: the unique e-mail index makes a second copy impossible.
 */
export class BulkUserLoader {
  readonly #counts = { total: 0, created: 0, failed: 0 }
  /** The /metrics counters of rows by outcome (tenantry_bulk_rows_total). */
  readonly #createdRows: { inc(count?: number): void }
  readonly #failedRows: { inc(count?: number): void }
  /**
   * E-mails of earlier rows of this request that the database may not show yet: those of batches still
   * being written (several can be in flight). A later row with one of them is a 409 naming the earlier
   * row, so the first occurrence always wins.
   */
  readonly #claimed = new Map<string, number>()
  /**
   * In a dry run, which writes nothing, the database never shows them: every e-mail so far is kept
   * instead, as fingerprints (seen-emails.ts), for at most MAX_DRY_RUN_ROWS rows.
   */
  readonly #seen: SeenEmails | undefined
  /**
   * What the rules need, with the creation time of the rows being prepared: one time per batch, taken
   * when the previous batch is written.
   */
  #env: NewUserEnv

  private constructor(
    private readonly ctx: ServiceContext,
    private readonly actor: Actor,
    private readonly baseEnv: Omit<NewUserEnv, 'now'>,
    private readonly memberships: BulkMemberships,
    readonly dryRun: boolean,
    /** A server database (as app.ts tells them apart), or the embedded one. */
    readonly serverDatabase: boolean,
  ) {
    this.#env = { ...baseEnv, now: new BatchInstant(ctx.clock.now()) }
    this.#seen = dryRun ? new SeenEmails() : undefined
    this.#createdRows = bulkRows.labels('created', String(dryRun))
    this.#failedRows = bulkRows.labels('failed', String(dryRun))
  }

  /** Checks the caller may create users at all (as for a single create) and loads what rows need. */
  static async open(
    ctx: ServiceContext,
    actor: Actor,
    options: { dryRun: boolean },
  ): Promise<BulkUserLoader> {
    if (!(await ctx.access.holdsAnywhere(actor, 'MANAGE_ALL_USERS'))) {
      throw new AppError('permission_denied', 'MANAGE_ALL_USERS is required to create platform users')
    }
    const env = {
      roles: await loadRoleCatalog(ctx),
      callerPlatformPermissions: platformPermissionsOf(actor),
      actorPrincipalId: actor.principalId,
    }
    const server = SERVER_DATABASE.test(ctx.config.databaseUrl ?? '')
    return new BulkUserLoader(ctx, actor, env, new BulkMemberships(ctx, actor), options.dryRun, server)
  }

  /**
   * Every check of one row that needs no write; `raw` is the parsed item, or why it could not be. A
   * promise only when the row names a tenant whose checks are not cached yet: most rows cost no await.
   */
  prepare(index: number, raw: unknown): PendingRow | Promise<PendingRow> {
    this.#counts.total += 1
    if (raw instanceof AppError) return this.#fail(index, raw)
    const invalid = validateItem(raw)
    if (invalid) return this.#fail(index, invalid)
    // The validated item is a create-user body with, at most, the membership fields the rules ignore.
    const input = raw as BulkUserInput
    this.#env.id = newId()
    const row = buildNewUserRow(input, this.#env)
    if (row instanceof AppError) return this.#fail(index, row)
    const { tenantId, tenantRoleId, tenantStatus } = input
    if (tenantId === undefined && tenantRoleId === undefined && tenantStatus === undefined) {
      return new PreparedRow(index, row, undefined)
    }
    return this.memberships
      .plan({ tenantId, tenantRoleId, tenantStatus })
      .then((planned) =>
        planned instanceof AppError ? this.#fail(index, planned) : new PreparedRow(index, row, planned),
      )
  }

  /**
   * Stores the prepared rows of one batch (or, in a dry run, checks their e-mails against the database
   * and the rest of the request) and returns every row's outcome in input order.
   */
  async write(batch: readonly PendingRow[]): Promise<RowOutcome[]> {
    this.#env = { ...this.baseEnv, now: new BatchInstant(this.ctx.clock.now()) }
    const outcomes = new Array<RowOutcome>(batch.length)
    const toStore: { position: number; prepared: PreparedRow }[] = []
    for (let position = 0; position < batch.length; position++) {
      const pending = batch[position]!
      if (!(pending instanceof PreparedRow)) {
        outcomes[position] = pending
        continue
      }
      const email = pending.row.email
      if (this.#seen) {
        // A dry run remembers every e-mail of the request, in bounded memory, up to a bound.
        if (pending.index >= MAX_DRY_RUN_ROWS) {
          outcomes[position] = this.#fail(pending.index, dryRunTooLong())
          continue
        }
        const earlier = this.#seen.claim(email, pending.index)
        if (earlier !== undefined) {
          outcomes[position] = this.#fail(pending.index, emailTaken(email, earlier))
          continue
        }
      } else {
        const earlier = this.#claimed.get(email)
        if (earlier !== undefined) {
          outcomes[position] = this.#fail(pending.index, emailTaken(email, earlier))
          continue
        }
        this.#claimed.set(email, pending.index)
      }
      toStore.push({ position, prepared: pending })
    }

    if (this.dryRun) {
      const taken = await findTakenEmails(
        this.ctx.db,
        toStore.map((s) => s.prepared.row.email),
      )
      for (const { position, prepared } of toStore) {
        const email = prepared.row.email
        outcomes[position] = taken.has(email)
          ? this.#fail(prepared.index, emailTaken(email))
          : { index: prepared.index, status: 200 }
      }
      return outcomes
    }

    // One creation time for the batch: rows prepared before and after the previous batch was launched
    // carry two, and the statement would then send both columns value by value.
    const batchTime = toStore[0]?.prepared.row.created
    for (const { prepared } of toStore) prepared.row.created = prepared.row.updated = batchTime!
    let stored: Map<string, StoredUser | AppError>
    try {
      stored = await this.#store(toStore.map((s) => s.prepared))
    } finally {
      // Written (or failed): from now on the database itself knows these e-mails.
      for (const { prepared } of toStore) this.#claimed.delete(prepared.row.email)
    }
    let created = 0
    for (const { position, prepared } of toStore) {
      const { row } = prepared
      const outcome = stored.get(row.id)
      if (outcome instanceof AppError) outcomes[position] = this.#fail(prepared.index, outcome)
      else if (outcome) {
        created += 1
        // The row as stored is the row sent plus the alias the database issued.
        const storedRow = row as UserRow
        storedRow.alias_platform_user_id = outcome.alias_platform_user_id
        outcomes[position] = { index: prepared.index, status: 201, result: toUser(storedRow) }
      } else outcomes[position] = this.#fail(prepared.index, emailTaken(row.email))
    }
    this.#counts.created += created
    this.#createdRows.inc(created)
    return outcomes
  }

  summary(): BulkSummary {
    return { ...this.#counts, ...(this.dryRun ? { dryRun: true } : {}) }
  }

  /**
   * One statement for the users and their audit events (and, when rows name tenants, a transaction with
   * one more for their memberships, one for the invitation mail and one for the membership events).
   * Should the batch fail as a whole — a role deleted since the rows were checked, say — each row is
   * retried alone, so that the failure lands on its own row.
   */
  async #store(rows: PreparedRow[]): Promise<Map<string, StoredUser | AppError>> {
    const byId = new Map<string, StoredUser | AppError>()
    try {
      for (const row of await this.#insert(rows)) byId.set(row.id, row)
      return byId
    } catch (error) {
      if (rows.length === 1) throw error
      this.ctx.logger.warn({ err: error }, 'bulk batch failed as a whole; retrying its rows one by one')
    }
    for (const row of rows) {
      try {
        const [stored] = await this.#insert([row])
        if (stored) byId.set(stored.id, stored)
      } catch (error) {
        // A row alone fails with its own domain error (the repositories map constraints to them).
        if (!(error instanceof AppError)) throw error
        byId.set(row.row.id, error)
      }
    }
    return byId
  }

  async #insert(rows: PreparedRow[]): Promise<StoredUser[]> {
    // Plainly at first (cheaper for the database); from the first taken e-mail on, skipping them. Rows
    // naming tenants are always written skipping them.
    if (!this.#metTakenEmail && !rows.some((r) => r.membership)) {
      try {
        return await this.#insertBatch(rows, false)
      } catch (error) {
        if (!(error instanceof AppError) || error.reason !== 'email_taken') throw error
        this.#metTakenEmail = true
      }
    }
    return this.#insertBatch(rows, true)
  }

  /**
   * One statement for the users and their `user.created` events (bulk.repository.ts). Rows naming tenants
   * add, in the same transaction, one statement for their memberships, one for the invitation mail and
   * one for the membership events (`membership.created`/`membership.invited`, by `recordAudit`, which also
   * queues their webhook deliveries) — the records an invitation writes. An event exists exactly when its
   * row committed.
   */
  async #insertBatch(rows: PreparedRow[], skipTaken: boolean): Promise<StoredUser[]> {
    const users = rows.map((r) => r.row)
    const events = userCreatedEvents(rows.length, this.ctx.clock.now(), this.actor)
    if (!rows.some((r) => r.membership)) {
      // The embedded database is sent the statement's long texts as bytes (bulk.repository.ts, LongTexts).
      const longTexts: LongTexts = this.serverDatabase ? 'strings' : 'bytes'
      return skipTaken
        ? insertUsersSkippingTakenEmails(this.ctx.db, users, events, longTexts)
        : insertUsers(this.ctx.db, users, events, longTexts)
    }
    // Read before the transaction: nothing but the batch's own statements runs inside it (the embedded
    // database has one connection, which the transaction holds).
    const inviter = rows.some((r) => r.membership?.status === 'invited') ? await this.#inviter() : ''
    const { stored, invitees } = await insertUsersWithMemberships(this.ctx, this.actor, inviter, rows, events)
    // New members change what the permission caches know (the write unit woke the worker for the mail).
    this.ctx.access.invalidate()
    if (invitees.length > 0) {
      const limits = invitationLimits(this.ctx)
      await Promise.all(invitees.map((email) => limits.recordMail(email)))
    }
    return stored
  }

  /**
   * Whether a batch of this request has met an e-mail that is taken. Until then batches are inserted
   * without ON CONFLICT (insertUsers); the batch that meets one fails as a whole, writes nothing, and is
   * sent again skipping taken e-mails, as every later batch is.
   */
  #metTakenEmail = false

  #inviterName: Promise<string> | undefined

  /** How invitation e-mails name the caller: looked up once per request, and only if one is sent. */
  #inviter(): Promise<string> {
    this.#inviterName ??= inviterName(this.ctx, this.actor)
    return this.#inviterName
  }

  #fail(index: number, error: AppError): RowOutcome {
    this.#counts.failed += 1
    this.#failedRows.inc()
    return failedRow(index, error)
  }
}
