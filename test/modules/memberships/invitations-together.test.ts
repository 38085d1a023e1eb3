import { sql } from 'kysely'
import { beforeEach, describe, expect, it } from 'vitest'
import { batchFigures, whileLocked } from '../../helpers/batching.js'
import { type FixtureUser, freshTenant, insertUser, uniqueEmail } from '../../helpers/fixtures.js'
import { membershipRequests } from '../../helpers/memberships.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * Invitations that arrive together are written together (modules/memberships/invitation-writes.ts): one
 * statement holds several, yet each request is answered with its own membership, leaves its own audit
 * event and mail, and a refused one refuses only itself.
 */
const t = useTestApp()
let tenant: { id: string; name: string }
/** The test's tenant's own Administrator: invitations come from a tenant administrator, as in the bench. */
let token: string

beforeEach(async () => {
  t.clock.set(new Date(Math.max(Date.now(), t.clock.now().getTime())))
  const fresh = await freshTenant(t)
  tenant = fresh.tenant
  token = fresh.admin.token
})

const { invite, outboxRows } = membershipRequests(
  () => t,
  () => token,
)

async function users(count: number): Promise<FixtureUser[]> {
  return Promise.all(Array.from({ length: count }, () => insertUser(t.database.handle.db)))
}

/**
 * Runs `requests` while another transaction holds the tenant rows (the test's by default), so that the
 * invitations' writes wait (their foreign key checks lock them) and arrive together, as under load; then
 * lets them go.
 */
async function whileTenantsAreLocked<T>(
  requests: () => Promise<T>,
  tenantIds: readonly string[] = [tenant.id],
): Promise<T> {
  return whileLocked(
    t,
    sql`select id from tenants where id = any (${tenantIds}::uuid[]) for update`,
    requests,
  )
}

/** The tenant's events of new memberships (created, or invited with a mail): target id → how many. */
async function createdEvents(tenantId: string): Promise<Map<string, number>> {
  const rows = await t.database.handle.db
    .selectFrom('audit_events')
    .select('target_id')
    .where('tenant_id', '=', tenantId)
    .where('action', 'in', ['membership.created', 'membership.invited'])
    .execute()
  const counts = new Map<string, number>()
  for (const row of rows) counts.set(row.target_id as string, (counts.get(row.target_id as string) ?? 0) + 1)
  return counts
}

describe('invitations written together', () => {
  it('writes concurrent invitations in fewer statements, each with its own membership, event and mail', async () => {
    const invitees = await users(40)
    const before = await batchFigures('invitation')
    const responses = await whileTenantsAreLocked(() =>
      Promise.all(invitees.map((user) => invite(tenant.id, { email: user.email, status: 'invited' }))),
    )
    const after = await batchFigures('invitation')
    expect(responses.map((r) => r.status)).toEqual(invitees.map(() => 201))
    // Each answer is its own invitee's membership.
    expect(responses.map((r) => r.body.result.userId)).toEqual(invitees.map((user) => user.id))
    expect(responses.every((r) => r.body.result.status === 'invited')).toBe(true)
    expect(responses.every((r) => r.body.result.invitationEmailStatus === 'queued')).toBe(true)
    // All 40 went through the statement batcher, some of them sharing a statement.
    expect(after.writes - before.writes).toBe(40)
    expect(after.statements - before.statements).toBeLessThan(40)
    // One event per invitee, targeting its user; one mail per invitee, to its address, for its user.
    const events = await createdEvents(tenant.id)
    expect(new Map(invitees.map((user) => [user.id, 1]))).toEqual(events)
    const mails = await outboxRows(tenant.id)
    expect(mails).toHaveLength(40)
    const mailFor = new Map(mails.map((row) => [(row.payload as { to: string }).to, row.payload]))
    for (const user of invitees) {
      expect(mailFor.get(user.email)).toMatchObject({ to: user.email, userId: user.id })
    }
  })

  it('refuses only the failing invitations of a batch: already a member, no such user', async () => {
    // The member's write fails the batch it is in, and each write of that batch runs again alone.
    const { retried } = await burstWithRefusals()
    expect(retried).toBe(true)
  })

  it('invites one person into several tenants at once: never in one statement, each written with its mail', async () => {
    // Eight others fill the running statements, so that the person's four invitations wait together. Were
    // two of them in one statement, it would fail on a server database (one counter row updated twice)
    // and its writes would run again alone: more writes than requests.
    const [person, ...fillers] = await users(9)
    const others = await Promise.all([1, 2, 3].map(() => freshTenant(t)))
    const tenants = [
      { tenant, token },
      ...others.map((each) => ({ tenant: each.tenant, token: each.admin.token })),
    ]
    const before = await batchFigures('invitation')
    const [responses] = await whileTenantsAreLocked(
      async () => {
        // The others first: they take the running statements, and the person's four queue behind them.
        const filling = Promise.all(
          fillers.map((user) => invite(tenant.id, { email: user.email, status: 'invited' })),
        )
        await new Promise((resolve) => setTimeout(resolve, 100))
        const person4 = Promise.all(
          tenants.map((each) =>
            invite(each.tenant.id, { email: person!.email, status: 'invited' }, each.token),
          ),
        )
        return Promise.all([person4, filling])
      },
      tenants.map((each) => each.tenant.id),
    )
    const after = await batchFigures('invitation')
    expect(responses.map((r) => r.status)).toEqual([201, 201, 201, 201])
    for (const each of tenants) {
      expect(
        (await outboxRows(each.tenant.id)).filter((row) => row.payload.to === person!.email),
      ).toHaveLength(1)
    }
    // No statement failed and ran again: the four were kept apart.
    expect(after.writes - before.writes).toBe(12)
  })
})

/**
 * Invites 12 users at once into the test's tenant, one of them a member already, with an unknown e-mail
 * among them; checks every answer and what was stored. `retried`: some write ran twice (a failed batch).
 */
async function burstWithRefusals(): Promise<{ retried: boolean }> {
  const invitees = await users(12)
  const member = invitees[5] as FixtureUser
  expect((await invite(tenant.id, { email: member.email })).status).toBe(201)
  const nobody = uniqueEmail('nobody')
  const emails = invitees.map((user) => user.email)
  emails.splice(8, 0, nobody)
  const before = await batchFigures('invitation')
  const responses = await whileTenantsAreLocked(() =>
    Promise.all(emails.map((email) => invite(tenant.id, { email, status: 'invited' }))),
  )
  const after = await batchFigures('invitation')
  const statusOf = (email: string) => responses[emails.indexOf(email)]
  expect(statusOf(member.email)?.status).toBe(409)
  expect(statusOf(member.email)?.body.error.reason).toBe('already_member')
  expect(statusOf(nobody)?.status).toBe(404)
  expect(statusOf(nobody)?.body.error.reason).toBe('user_not_found')
  const others = invitees.filter((u) => u !== member)
  for (const user of others) {
    expect(statusOf(user.email)?.status).toBe(201)
    expect(statusOf(user.email)?.body.result.userId).toBe(user.id)
  }
  // The refused invitation wrote nothing: the member keeps its one event and its pending membership, and
  // every other invitee has one event and one mail.
  const events = await createdEvents(tenant.id)
  expect(events).toEqual(new Map(invitees.map((user) => [user.id, 1])))
  const mails = await outboxRows(tenant.id)
  expect(mails.map((row) => (row.payload as { userId: string }).userId).sort()).toEqual(
    others.map((u) => u.id).sort(),
  )
  const stored = await t.request('GET', `/v1/tenants/${tenant.id}/users/${member.id}`, { token })
  expect(stored.body.result.status).toBe('pending')
  return { retried: after.writes - before.writes > emails.length }
}
