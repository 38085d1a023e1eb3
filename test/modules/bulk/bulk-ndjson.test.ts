import { type IncomingMessage, request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { closeAfterBulk } from '../../helpers/bulk.js'
import { insertUser, REGION_ID, uniqueEmail, uniqueName } from '../../helpers/fixtures.js'
import { useTestApp } from '../../helpers/test-app.js'

/** Bulk load of platform users, the NDJSON form (docs/api.md#bulk-load-of-platform-users). */

const t = useTestApp()
let adminToken: string

beforeAll(async () => {
  adminToken = await t.adminToken()
})
afterAll(() => closeAfterBulk(t))

async function postNdjson(body: string, query = '') {
  const response = await t.app.inject({
    method: 'POST',
    url: `/v1/users${query}`,
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/x-ndjson; charset=utf-8' },
    payload: body,
  })
  const lines = response.body
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line))
  return { status: response.statusCode, contentType: String(response.headers['content-type']), lines }
}

async function existingEmails(emails: string[]): Promise<Map<string, number>> {
  const rows = await t.database.handle.db
    .selectFrom('users')
    .select(['email'])
    .where('email', 'in', emails)
    .execute()
  const counts = new Map<string, number>()
  for (const row of rows) counts.set(row.email, (counts.get(row.email) ?? 0) + 1)
  return counts
}

const user = (email: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ email, roleId: ROLE_IDS.platformUser, ...extra })

describe('POST /v1/users with Content-Type application/x-ndjson', () => {
  it('answers a malformed line in the middle as that line’s error and creates every other row', async () => {
    const emails = [uniqueEmail('nd'), uniqueEmail('nd'), uniqueEmail('nd'), uniqueEmail('nd')]
    const body = [
      user(emails[0]!),
      user(emails[1]!, { firstName: 'Grace' }),
      `{"email": "${uniqueEmail('broken')}", "roleId": `,
      '',
      user(emails[2]!),
      user(emails[3]!),
    ].join('\n')

    const response = await postNdjson(body)

    expect(response.status).toBe(200)
    expect(response.contentType).toContain('application/x-ndjson')
    const results = response.lines.slice(0, -1)
    // One result line per input line (the blank line is skipped), in input order, with its line number.
    expect(results.map((r) => [r.index, r.line, r.status])).toEqual([
      [0, 1, 201],
      [1, 2, 201],
      [2, 3, 400],
      [3, 5, 201],
      [4, 6, 201],
    ])
    expect(results[2].error).toMatchObject({ code: 400, reason: 'invalid_json' })
    expect(results[2].error.message).toContain('Line 3')
    expect(results[1].result).toMatchObject({ email: emails[1], firstName: 'Grace', hasPassword: false })
    expect(response.lines.at(-1)).toEqual({ summary: { total: 5, created: 4, failed: 1 } })
    const stored = await existingEmails(emails)
    for (const email of emails) expect(stored.get(email)).toBe(1)
  })

  it('streams thousands of rows past the 1 MiB JSON limit, in batches, catching duplicates across them', async () => {
    const existing = await insertUser(t.database.handle.db)
    const count = 3000
    const emails = Array.from({ length: count }, () => uniqueEmail('many'))
    const lines = emails.map((email, i) =>
      user(email, { firstName: `First ${i}`, externalId: 'x'.repeat(250) }),
    )
    // A duplicate of a row two batches earlier, one inside the same batch, and an existing user.
    lines[2100] = user(emails[5]!.toUpperCase())
    // Rows 240 and 260 sit in consecutive batches, written at the same time: the first still wins.
    lines[260] = user(emails[240]!)
    lines[11] = user(emails[10]!)
    lines[1500] = user(existing.email)
    const body = `${lines.join('\n')}\n`
    expect(Buffer.byteLength(body)).toBeGreaterThan(1024 * 1024)

    const response = await postNdjson(body)

    expect(response.status).toBe(200)
    const results = response.lines.slice(0, -1)
    expect(results).toHaveLength(count)
    expect(results.map((r) => r.index)).toEqual(emails.map((_, i) => i))
    const failedAt = results.filter((r) => r.status !== 201).map((r) => [r.index, r.status, r.error.reason])
    expect(failedAt).toEqual([
      [11, 409, 'email_taken'],
      [260, 409, 'email_taken'],
      [1500, 409, 'email_taken'],
      [2100, 409, 'email_taken'],
    ])
    expect(results[240].status).toBe(201)
    expect(results[260].error.message).toContain('already exists')
    expect(response.lines.at(-1)).toEqual({ summary: { total: count, created: count - 4, failed: 4 } })
    const stored = await existingEmails(emails)
    // Every generated e-mail once, but those of the four lines that were replaced by repeats.
    expect(stored.size).toBe(count - 4)
    expect([...stored.values()].every((n) => n === 1)).toBe(true)
    for (const replaced of [11, 260, 1500, 2100]) expect(stored.has(emails[replaced]!)).toBe(false)
  })

  it('dryRun checks every row, duplicates across batches included, and writes nothing', async () => {
    const emails = Array.from({ length: 1200 }, () => uniqueEmail('dry'))
    const lines = emails.map((email) => user(email))
    lines[1100] = user(emails[3]!)
    lines[7] = user(uniqueEmail('bad'), { personalTelephone: '12345' })

    const response = await postNdjson(lines.join('\n'), '?dryRun=true')

    const results = response.lines.slice(0, -1)
    expect(results.filter((r) => r.status !== 200).map((r) => [r.index, r.status, r.error.reason])).toEqual([
      [7, 400, 'validation_failed'],
      [1100, 409, 'email_taken'],
    ])
    expect(results.every((r) => r.result === undefined)).toBe(true)
    expect(response.lines.at(-1)).toEqual({ summary: { total: 1200, created: 0, failed: 2, dryRun: true } })
    expect((await existingEmails(emails)).size).toBe(0)
  })

  it('stores text exactly, whatever quotes, backslashes, braces or commas it holds', async () => {
    const tricky = [
      { firstName: 'O"Brien', lastName: 'back\\slash', externalId: '{a,b}' },
      { firstName: 'NULL', lastName: 'null', externalId: '' },
      { firstName: 'Zoë 李', lastName: ' spaced ', externalId: 'a,"b",\\c' },
    ]
    const emails = tricky.map((_, i) => uniqueEmail(`odd"${i}{x}`))
    const response = await postNdjson(tricky.map((fields, i) => user(emails[i]!, fields)).join('\n'))
    expect(response.lines.slice(0, -1).map((r) => r.status)).toEqual([201, 201, 201])
    const stored = await t.database.handle.db
      .selectFrom('users')
      .select(['email', 'first_name', 'last_name', 'external_id'])
      .where('email', 'in', emails)
      .execute()
    for (const [i, fields] of tricky.entries()) {
      const row = stored.find((r) => r.email === emails[i])
      expect(row).toEqual({
        email: emails[i],
        first_name: fields.firstName,
        last_name: fields.lastName,
        external_id: fields.externalId,
      })
      expect(response.lines[i].result).toMatchObject(fields)
    }
  })

  it('a line too long to be a user is that line’s error', async () => {
    const email = uniqueEmail('after-long')
    const body = [user(uniqueEmail('long'), { firstName: 'y'.repeat(70 * 1024) }), user(email)].join('\n')
    const response = await postNdjson(body)
    expect(response.lines.map((r) => r.status ?? 'summary')).toEqual([413, 201, 'summary'])
    expect(response.lines[0].error.reason).toBe('payload_too_large')
    expect((await existingEmails([email])).get(email)).toBe(1)
  })

  it('an empty stream answers only the summary', async () => {
    const response = await postNdjson('')
    expect(response.lines).toEqual([{ summary: { total: 0, created: 0, failed: 0 } }])
  })

  it('answers a slow sender’s rows as it goes: a batch that is not full is written after a short wait', async () => {
    // A real socket: the answer is read while the request is still open.
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' })
    const emails = [uniqueEmail('slow'), uniqueEmail('slow'), uniqueEmail('slow')]
    const req = request(`${address}/v1/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/x-ndjson' },
    })
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      req.on('response', resolve)
      req.on('error', reject)
      req.flushHeaders()
      req.write(`${user(emails[0]!)}\n`)
    })
    response.setEncoding('utf8')
    const received: string[] = []
    let carry = ''
    let waiting: (() => void) | undefined
    response.on('data', (chunk: string) => {
      const lines = (carry + chunk).split('\n')
      carry = lines.pop()!
      received.push(...lines)
      waiting?.()
    })
    const ended = new Promise((resolve) => response.on('end', resolve))
    const answered = async (count: number) => {
      const deadline = Date.now() + 5_000
      while (received.length < count && Date.now() < deadline) {
        await new Promise<void>((resolve) => {
          waiting = resolve
          setTimeout(resolve, 100)
        })
      }
      return received.map((line) => JSON.parse(line))
    }

    // Each row is answered while the request is still open, long before a batch would be full.
    expect((await answered(1)).map((r) => [r.line, r.status])).toEqual([[1, 201]])
    req.write(`${user(emails[1]!)}\n{"broken"\n`)
    expect((await answered(3)).map((r) => [r.line, r.status])).toEqual([
      [1, 201],
      [2, 201],
      [3, 400],
    ])
    req.end(user(emails[2]!))
    await ended
    const lines = received.map((line) => JSON.parse(line))
    expect(lines.map((r) => r.line ?? 'summary')).toEqual([1, 2, 3, 4, 'summary'])
    expect(lines.at(-1)).toEqual({ summary: { total: 4, created: 3, failed: 1 } })
    const stored = await existingEmails(emails)
    for (const email of emails) expect(stored.get(email)).toBe(1)
  })

  it('is refused before reading when the caller may not create users', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/users',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: user(uniqueEmail('anon')),
    })
    expect(response.statusCode).toBe(401)
  })

  it('is not a body type any other route takes', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/tenants',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/x-ndjson' },
      payload: JSON.stringify({ name: uniqueName(), regionId: REGION_ID }),
    })
    expect(response.statusCode).toBe(415)
    expect(JSON.parse(response.body).error.reason).toBe('unsupported_media_type')
  })
})
