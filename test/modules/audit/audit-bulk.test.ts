import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { closeAfterBulk } from '../../helpers/bulk.js'
import { createTenantAsAdmin, insertUser, uniqueEmail } from '../../helpers/fixtures.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * The audit trail of bulk loads (docs/api.md#bulk-load-of-platform-users, docs/webhooks.md): every row a bulk load of `POST /v1/users` writes —
 * JSON array or NDJSON stream, with or without a tenant membership — leaves the events a single create
 * and an invitation leave (`user.created`, then `membership.created` / `membership.invited`), with the
 * request's id and address and the caller as actor; a rejected row leaves none, and a dry run none.
 */
const t = useTestApp()
let admin: string
let adminId: string
let url: string
let tenantId: string

beforeAll(async () => {
  admin = await t.adminToken()
  adminId = (
    await t.ctx.db
      .selectFrom('users')
      .select('id')
      .where('email', '=', t.config.adminEmail)
      .executeTakeFirstOrThrow()
  ).id
  tenantId = (await createTenantAsAdmin(t)).id
  // NDJSON loads go over a real connection: their batches are written as the socket pulls the answer.
  url = await t.app.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(() => closeAfterBulk(t))

interface Event {
  action: string
  actor_type: string
  actor_id: string | null
  tenant_id: string | null
  target_type: string
  target_id: string | null
  changes: Record<string, [unknown, unknown]>
  request_id: string | null
  ip: string | null
}

/** The events one request left, read from the table (the API has no request-id filter). */
async function eventsOfRequest(requestId: string): Promise<Event[]> {
  return (await t.ctx.db
    .selectFrom('audit_events')
    .select(['action', 'actor_type', 'actor_id', 'tenant_id', 'target_type', 'target_id', 'changes'])
    .select(['request_id', 'ip'])
    .where('request_id', '=', requestId)
    .orderBy('id')
    .execute()) as Event[]
}

async function countEvents(): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('audit_events')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

let requests = 0
const newRequestId = () => `bulk-audit-${Date.now().toString(36)}-${++requests}`

async function postArray(items: unknown[], query = '') {
  const requestId = newRequestId()
  const response = await t.request('POST', `/v1/users${query}`, {
    token: admin,
    headers: { 'x-request-id': requestId },
    body: items,
  })
  expect(response.status).toBe(200)
  expect(response.headers['x-request-id']).toBe(requestId)
  return { requestId, result: response.body.result as any[], summary: response.body.summary }
}

/** An NDJSON load over HTTP: its result lines (in input order) and summary. */
function postNdjson(
  lines: string[],
  query = '',
): Promise<{ requestId: string; result: any[]; summary: any }> {
  const requestId = newRequestId()
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/v1/users${query}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${admin}`,
        'content-type': 'application/x-ndjson',
        'x-request-id': requestId,
      },
    })
    req.on('error', reject)
    req.on('response', (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
      })
      res.on('end', () => {
        try {
          expect(res.statusCode).toBe(200)
          const parsed = text
            .split('\n')
            .filter((line) => line !== '')
            .map((line) => JSON.parse(line))
          const summary = parsed.pop().summary
          resolve({ requestId, result: parsed, summary })
        } catch (error) {
          reject(error)
        }
      })
    })
    req.end(lines.map((line) => `${line}\n`).join(''))
  })
}

const createdIds = (result: any[]) => result.filter((r) => r.status === 201).map((r) => r.result.id as string)

/** What a single create writes for the same input: the reference the bulk events must equal. */
async function singleCreateChanges(input: Record<string, unknown>) {
  const created = await t.request('POST', '/v1/users', { token: admin, body: input })
  expect(created.status).toBe(201)
  const [event] = (await t.ctx.db
    .selectFrom('audit_events')
    .select('changes')
    .where('target_id', '=', created.body.result.id)
    .where('action', '=', 'user.created')
    .execute()) as { changes: Record<string, [unknown, unknown]> }[]
  return event!.changes
}

/** Every event of the load: the request's id and address, the caller as actor. */
function expectRequestAndActor(events: Event[], requestId: string) {
  for (const event of events) {
    expect(event).toMatchObject({ actor_type: 'user', actor_id: adminId, request_id: requestId })
    expect(event.ip).toEqual(expect.any(String))
  }
}

/** Rows that fail on their own, whichever form: none of them may leave an event. */
function rejectedRows(existingEmail: string, duplicateOf: string) {
  const invalid = uniqueEmail('rej-phone')
  const tooMany = uniqueEmail('rej-role')
  return {
    emails: [invalid, tooMany, existingEmail],
    items: [
      { email: invalid, roleId: ROLE_IDS.platformUser, personalTelephone: '555-0100' },
      { email: tooMany, roleId: ROLE_IDS.agent },
      { email: existingEmail, roleId: ROLE_IDS.platformUser },
      { email: duplicateOf.toUpperCase(), roleId: ROLE_IDS.platformUser },
      { email: 'not-an-email', roleId: ROLE_IDS.platformUser },
    ],
  }
}

describe('bulk loads write the audit events of every row they write', () => {
  it('JSON array: one user.created per created row, equal to a single create’s, with the request id and actor; rejected rows none', async () => {
    // two shapes of row, so that the batch has columns that vary and columns that do not
    const shapes = [
      {
        roleId: ROLE_IDS.platformUser,
        firstName: 'Ada',
        personalTelephone: '+14155550100',
        additionalRoleIds: [ROLE_IDS.platformAdministrator],
      },
      { roleId: ROLE_IDS.platformUser, lastName: 'Hopper', externalId: 'crm-7', status: 'pending' },
    ]
    const references = [
      await singleCreateChanges({ email: uniqueEmail('ref'), ...shapes[0] }),
      await singleCreateChanges({ email: uniqueEmail('ref'), ...shapes[1] }),
    ]
    const existing = await insertUser(t.ctx.db)
    const valid = Array.from({ length: 7 }, () => uniqueEmail('arr'))
    const rejected = rejectedRows(existing.email, valid[0]!)
    const items = [
      ...valid.map((email, i) => ({
        email,
        ...shapes[i % 2],
        // never taken from a bulk row, and never in an event
        password: 'a bulk row password',
      })),
      ...rejected.items,
    ]
    const { requestId, result, summary } = await postArray(items)
    expect(summary).toEqual({ total: 12, created: 7, failed: 5 })

    const events = await eventsOfRequest(requestId)
    expect(events.map((e) => e.action)).toEqual(valid.map(() => 'user.created'))
    expect(events.map((e) => e.target_id)).toEqual(createdIds(result))
    expectRequestAndActor(events, requestId)
    for (const [i, event] of events.entries()) {
      expect(event).toMatchObject({ tenant_id: null, target_type: 'user' })
      expect(event.changes).toEqual({ ...references[i % 2], email: [null, valid[i]] })
      expect(event.changes).not.toHaveProperty('password')
    }
    const text = JSON.stringify(events)
    expect(text).not.toContain('a bulk row password')
    for (const email of rejected.emails) expect(text).not.toContain(email)
  })

  it('NDJSON over several batches, with a taken e-mail among them: exactly one user.created per created row', async () => {
    const existing = await insertUser(t.ctx.db)
    const valid = Array.from({ length: 620 }, () => uniqueEmail('nd'))
    const rejected = rejectedRows(existing.email, valid[3]!)
    // The taken e-mail in the first batch makes it fail as a whole and be sent again skipping it: the
    // first attempt's events must not survive it.
    const lines = valid.map((email) =>
      JSON.stringify({ email, roleId: ROLE_IDS.platformUser, lastName: 'Bulk' }),
    )
    lines.splice(5, 0, ...rejected.items.map((item) => JSON.stringify(item)), '{"email": not json')
    const { requestId, result, summary } = await postNdjson(lines)
    expect(summary).toEqual({ total: 626, created: 620, failed: 6 })

    const events = await eventsOfRequest(requestId)
    expect(events).toHaveLength(620)
    expect(new Set(events.map((e) => e.action))).toEqual(new Set(['user.created']))
    expect(events.map((e) => e.target_id).sort()).toEqual(createdIds(result).sort())
    expectRequestAndActor(events, requestId)
    expect(events.map((e) => e.changes.email?.[1]).sort()).toEqual([...valid].sort())
    expect(events[0]!.changes.lastName).toEqual([null, 'Bulk'])
    const text = JSON.stringify(events)
    for (const email of rejected.emails) expect(text).not.toContain(email)
  })

  it('names with quotes, backslashes and characters beyond ASCII: the event holds them as the user row and a single create do', async () => {
    const shape = {
      roleId: ROLE_IDS.platformUser,
      firstName: 'Zoë "Zee"',
      lastName: 'O\\Brien 日本 😀',
      externalId: 'crm\\"7"',
    }
    const reference = await singleCreateChanges({ email: uniqueEmail('ref-text'), ...shape })
    const emails = [uniqueEmail('text'), uniqueEmail('text')]
    // A lone surrogate cannot travel as UTF-8: the user row holds U+FFFD, and so must its event.
    const lone = uniqueEmail('lone')
    const lines = [
      ...emails.map((email) => JSON.stringify({ email, ...shape })),
      JSON.stringify({ email: lone, roleId: ROLE_IDS.platformUser, firstName: 'A\ud800B' }),
    ]
    const { requestId, result, summary } = await postNdjson(lines)
    expect(summary).toEqual({ total: 3, created: 3, failed: 0 })

    const events = await eventsOfRequest(requestId)
    expect(events).toHaveLength(3)
    for (const [i, email] of emails.entries()) {
      expect(events[i]!.changes).toEqual({ ...reference, email: [null, email] })
    }
    const stored = await t.ctx.db
      .selectFrom('users')
      .select('first_name')
      .where('id', '=', result[2].result.id)
      .executeTakeFirstOrThrow()
    expect(stored.first_name).toBe('A\ufffdB')
    expect(events[2]!.changes.firstName).toEqual([null, 'A\ufffdB'])
  })

  it('rows naming a tenant: user.created then membership.created or membership.invited, as an invitation writes them (JSON and NDJSON)', async () => {
    // The reference: an invitation of an existing user.
    const invitee = await insertUser(t.ctx.db)
    const invitation = await t.request('POST', `/v1/tenants/${tenantId}/users`, {
      token: admin,
      body: { email: invitee.email, roleId: ROLE_IDS.agent, status: 'invited' },
    })
    expect(invitation.status).toBe(201)
    const [reference] = (await t.ctx.db
      .selectFrom('audit_events')
      .select(['action', 'tenant_id', 'target_type', 'target_id', 'changes'])
      .where('target_id', '=', invitee.id)
      .where('action', '=', 'membership.invited')
      .execute()) as Event[]
    expect(reference).toBeDefined()

    for (const form of ['json', 'ndjson'] as const) {
      const statuses = ['invited', 'accepted', 'pending', undefined] as const
      const emails = statuses.map(() => uniqueEmail(`member-${form}`))
      const items: Record<string, unknown>[] = statuses.map((tenantStatus, i) => ({
        email: emails[i],
        roleId: ROLE_IDS.platformUser,
        tenantId,
        tenantRoleId: ROLE_IDS.agent,
        ...(tenantStatus ? { tenantStatus } : {}),
      }))
      // a plain row, and rows the membership rules refuse: no user, no event
      const plain = uniqueEmail(`plain-${form}`)
      const refused = [uniqueEmail(`refused-${form}`), uniqueEmail(`refused-${form}`)]
      items.push(
        { email: plain, roleId: ROLE_IDS.platformUser },
        {
          email: refused[0],
          roleId: ROLE_IDS.platformUser,
          tenantId: crypto.randomUUID(),
          tenantRoleId: ROLE_IDS.agent,
        },
        { email: refused[1], roleId: ROLE_IDS.platformUser, tenantId, tenantRoleId: ROLE_IDS.platformUser },
      )
      const { requestId, result, summary } =
        form === 'json' ? await postArray(items) : await postNdjson(items.map((item) => JSON.stringify(item)))
      expect(summary).toMatchObject({ total: 7, created: 5, failed: 2 })
      const ids = createdIds(result)

      const events = await eventsOfRequest(requestId)
      expectRequestAndActor(events, requestId)
      // the batch's users, in input order, then their memberships
      const expected = [
        ...ids.map((id) => ['user.created', id]),
        ...statuses.map((status, i) => [
          status === 'invited' ? 'membership.invited' : 'membership.created',
          ids[i],
        ]),
      ]
      expect(events.map((e) => [e.action, e.target_id])).toEqual(expected)
      for (const [i, status] of statuses.entries()) {
        const membership = events.find((e) => e.target_type === 'membership' && e.target_id === ids[i])!
        expect(membership).toMatchObject({ tenant_id: tenantId, target_type: 'membership' })
        expect(membership.changes).toEqual({
          roleId: [null, ROLE_IDS.agent],
          status: [null, status ?? 'pending'],
        })
      }
      // the invited row's event is the invitation's, but for the member it names
      const invitedEvent = events.find((e) => e.action === 'membership.invited')!
      expect({ ...invitedEvent, target_id: null }).toMatchObject({ ...reference, target_id: null })
      const text = JSON.stringify(events)
      for (const email of refused) expect(text).not.toContain(email)
    }
  })

  it('a dry run writes no event, in either form', async () => {
    const rows = Array.from({ length: 5 }, () => ({
      email: uniqueEmail('dry'),
      roleId: ROLE_IDS.platformUser,
      tenantId,
      tenantRoleId: ROLE_IDS.agent,
      tenantStatus: 'invited',
    }))
    const before = await countEvents()
    const array = await postArray(rows, '?dryRun=true')
    expect(array.summary).toEqual({ total: 5, created: 0, failed: 0, dryRun: true })
    const stream = await postNdjson(
      rows.map((row) => JSON.stringify(row)),
      '?dryRun=true',
    )
    expect(stream.summary).toEqual({ total: 5, created: 0, failed: 0, dryRun: true })
    expect(await countEvents()).toBe(before)
  })
})
