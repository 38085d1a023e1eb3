/**
 * The invitation ceiling: what an invitation's required work costs with none of Tenantry's code — bare
 * Fastify, the same logger, `pg`, hand-written SQL against Tenantry's own tables (the bench database is
 * migrated). The work is what an `invited` membership requires (docs/product.md#invitations), no more:
 * - one statement (named, prepared once per connection) that counts the invitee's e-mail in the shared
 *   counters (docs/operations.md#rate-limit-counters-across-processes), inserts the membership of the user with the e-mail, its outbox row (the token only as
 *   an AES-256-GCM envelope, docs/api.md#the-invitation-e-mail) and its audit event (docs/webhooks.md, same statement);
 * - the mail sent within the window: rendered, written to the log (the bench's server has no SMTP server,
 *   so its mail goes to the log too) and marked sent, its envelope dropped, 100 rows to an update.
 * Nothing else: no authentication, permission or role check, validation, idempotency, webhook guard,
 * metrics or request context. Tenantry's invitation compared with this says how much of the gap to the
 * insert ceiling is Tenantry's, and this compared with the insert ceiling how much is the work's own.
 * PostgreSQL only: the embedded ceiling database has none of Tenantry's tables.
 */
import { createCipheriv, createHash, randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type pg from 'pg'
import type { Logger } from 'pino'
import { uuidv7 } from 'uuidv7'
import { ROLE_IDS } from '../../src/access/permissions.js'
import { INVITATION_MAILS_PER_HOUR } from '../../src/modules/memberships/invitation-limits.js'
import { INVITATION_EMAIL } from '../../src/outbox/outbox.repository.js'

const MARK_BATCH = 100
const COALESCE_MS = 20

/**
 * Like Tenantry's statement, it returns only what the database decided (the user, the defaulted columns);
 * the record adds what the request decided.
 */
const INVITATION = `
  with mail_count as (
    insert into rate_limit_counters as c (key, count, reset_at) values ($1, 1, $2)
    on conflict (key) do update set count = c.count + 1
    returning count),
  invitee as (select id, email, first_name, last_name from users where email = $3),
  membership as (
    insert into tenant_users (tenant_id, user_id, role_id, status, invitation_expiry_date,
      invitation_token_hash, invited_by, created, created_by, updated, updated_by)
    select $4, invitee.id, $5, 'invited', $6, $7, $8, $9, $8, $9, $8
    from invitee where (select count from mail_count) <= ${INVITATION_MAILS_PER_HOUR}
    returning user_id, state, extension, extensions),
  mail as (
    insert into outbox (id, tenant_id, kind, payload, attempts, next_attempt_at, locked_until, created)
    select $10, $4, '${INVITATION_EMAIL}', $11::jsonb || jsonb_build_object('userId', user_id), 1, $9, $12, $9
    from membership),
  event as (
    insert into audit_events (id, occurred, actor_type, actor_id, action, tenant_id, target_type, target_id,
      changes)
    select $13, $9, 'user', $8, 'membership.created', $4, 'membership', user_id, $14::jsonb from membership)
  select membership.*, invitee.email, invitee.first_name, invitee.last_name
  from membership cross join invitee`

const MARK_SENT = `
  update outbox set status = 'sent', sent_at = $2, locked_until = null, payload = payload - 'envelope'
  where id = any ($1::uuid[])`

interface QueuedMail {
  id: string
  to: string
  tenantName: string
  token: string
  expiresAt: string
}

/** Registers POST /invitation ({ email, tenantId }) and delivers its mail; returns the stop function. */
export function invitationCeiling(
  app: FastifyInstance,
  pool: pg.Pool,
  mailPool: pg.Pool,
  logger: Logger,
): () => Promise<void> {
  const key = randomBytes(32)
  const actor = uuidv7()
  const queue: QueuedMail[] = []
  let delivering: Promise<void> | undefined

  const deliver = async () => {
    await new Promise((resolve) => setTimeout(resolve, COALESCE_MS))
    try {
      await deliverQueued()
    } finally {
      delivering = undefined
    }
  }
  const deliverQueued = async () => {
    while (queue.length > 0) {
      const batch = queue.splice(0, MARK_BATCH)
      for (const mail of batch) {
        const link = `http://127.0.0.1/invitations/accept?token=${mail.token}`
        const text = `You are invited to ${mail.tenantName}.\n\nAccept before ${mail.expiresAt}: ${link}\n`
        logger.info({ mail: { to: mail.to, subject: `Join ${mail.tenantName}`, links: [link] } }, text)
      }
      await mailPool.query({
        name: 'mark-sent',
        text: MARK_SENT,
        values: [batch.map((m) => m.id), new Date()],
      })
      for (const mail of batch) logger.info({ outboxId: mail.id }, 'e-mail sent')
    }
  }

  app.post<{ Body: { email: string; tenantId: string } }>('/invitation', async (request, reply) => {
    const { email, tenantId } = request.body
    const now = new Date()
    const expiresAt = new Date(now.getTime() + 86_400_000)
    const token = randomBytes(32).toString('base64url')
    const outboxId = uuidv7()
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(`outbox:${outboxId}`))
    const ciphertext = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()])
    const envelope = {
      iv: iv.toString('base64'),
      ct: ciphertext.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
    }
    const facts = {
      tenantId,
      to: email,
      tenantName: 'Bench',
      roleName: 'Agent',
      inviterName: 'Bench',
      expiresAt: expiresAt.toISOString(),
    }
    const { rows } = await pool.query({
      name: 'invitation',
      text: INVITATION,
      values: [
        `ceiling-mail:${email}`,
        new Date(now.getTime() + 3_600_000),
        email,
        tenantId,
        ROLE_IDS.agent,
        expiresAt,
        createHash('sha256').update(token).digest('base64url'),
        actor,
        now,
        outboxId,
        JSON.stringify({ ...facts, envelope }),
        new Date(now.getTime() + 120_000),
        uuidv7(),
        JSON.stringify({ roleId: [null, ROLE_IDS.agent], status: [null, 'invited'] }),
      ],
    })
    const row = rows[0]
    if (!row) return reply.code(404).send({ error: 'no such user' })
    queue.push({ id: outboxId, to: email, tenantName: facts.tenantName, token, expiresAt: facts.expiresAt })
    delivering ??= deliver()
    const record = {
      ...row,
      tenantId,
      roleId: ROLE_IDS.agent,
      status: 'invited',
      invitationExpiryDate: expiresAt,
      emailStatus: 'queued',
      created: now,
      createdBy: actor,
      updated: now,
      updatedBy: actor,
    }
    return reply.code(201).send({ result: record })
  })

  return async () => {
    await delivering
  }
}
