import fastJsonStringify from 'fast-json-stringify'
import { describe, expect, it } from 'vitest'
import { Uuid7Generator } from '../../../src/crypto/uuid7.js'
import { BulkResultLine } from '../../../src/modules/bulk/bulk.schemas.js'
import { ndjsonLineChunks } from '../../../src/modules/bulk/ndjson.js'
import { SeenEmails } from '../../../src/modules/bulk/seen-emails.js'
import { CreatedRowLines, withNullableScalars } from '../../../src/modules/bulk/serialization.js'
import type { User } from '../../../src/modules/users/users.schemas.js'

/** The pieces of the bulk load that need no database: ids, answer lines, line splitting. */

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const ids = new Uuid7Generator()
const newUserId = (now?: number) => ids.next(now)

describe('Uuid7Generator', () => {
  it('issues canonical UUIDv7 text, unique and in creation order, with the time in its first 48 bits', () => {
    const before = Date.now()
    const ids = Array.from({ length: 20_000 }, () => newUserId())
    const after = Date.now()
    for (const id of ids) expect(id).toMatch(UUID_V7)
    expect(new Set(ids).size).toBe(ids.length)
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true)
    const ms = Number.parseInt(ids[0]!.replaceAll('-', '').slice(0, 12), 16)
    expect(ms).toBeGreaterThanOrEqual(before)
    expect(ms).toBeLessThanOrEqual(after)
  })

  it('keeps counting up within a millisecond and when the clock steps back a little', () => {
    const now = Date.now() + 60_000
    const first = newUserId(now)
    const same = newUserId(now)
    const back = newUserId(now - 5_000)
    expect(same > first).toBe(true)
    expect(back > same).toBe(true)
    // Ten seconds back or more: a new sequence from the clock's time.
    const reset = newUserId(now - 20_000)
    expect(Number.parseInt(reset.replaceAll('-', '').slice(0, 12), 16)).toBe(now - 20_000)
  })
})

describe('CreatedRowLines', () => {
  // Fastify serializes responses with fast-json-stringify; the bulk route uses this schema for each line.
  const compiled = fastJsonStringify(withNullableScalars(BulkResultLine) as object)
  const user = (overrides: Partial<User> = {}): User => ({
    id: newUserId(),
    email: 'ada@example.test',
    roleId: '00000000-0000-7000-8000-000000000002',
    additionalRoleIds: [],
    firstName: 'Ada',
    lastName: 'Lovelace',
    externalId: '',
    personalTelephone: null,
    status: 'enabled',
    aliasPlatformUserId: '42',
    defaultTenant: null,
    hasPassword: false,
    resetPasswordExpiryDate: null,
    resetPasswordEmailStatus: null,
    createdBy: newUserId(),
    updatedBy: newUserId(),
    created: '2026-01-02T03:04:05.678Z',
    updated: '2026-01-02T03:04:05.678Z',
    ...overrides,
  })

  it('writes the same text as the schema’s serializer, field for field', () => {
    const lines = new CreatedRowLines()
    const cases = [
      user(),
      user({
        personalTelephone: '+14155550100',
        externalId: 'ext-1',
        additionalRoleIds: [newUserId(), newUserId()],
      }),
      user({ firstName: 'quote " backslash \\ tab \t newline \n', lastName: 'é ü 漢字 😀' }),
      user({ lastName: 'lone \ud800 surrogate', externalId: '\u0000\u001f\u007f' }),
      user({
        defaultTenant: newUserId(),
        hasPassword: true,
        resetPasswordExpiryDate: '2026-02-03T04:05:06.000Z',
      }),
      user({ createdBy: null, updatedBy: null }),
    ]
    for (const [i, result] of cases.entries()) {
      // Twice: the second time the repeated values come from its memory.
      for (let round = 0; round < 2; round++) {
        const line = lines.line(i, i + 1, result)
        expect(line).toBe(compiled({ index: i, line: i + 1, status: 201, result }))
        expect(JSON.parse(line).result).toEqual(result)
      }
    }
  })

  it('names exactly the fields of the user schema (a field added there must be added here)', () => {
    const line = JSON.parse(new CreatedRowLines().line(0, 1, user()))
    const schema = (BulkResultLine.properties.result as unknown as { properties: object }).properties
    expect(Object.keys(line.result)).toEqual(Object.keys(schema))
  })
})

describe('ndjsonLineChunks', () => {
  async function* pieces(...texts: string[]) {
    for (const text of texts) yield Buffer.from(text)
  }
  async function collect(source: AsyncIterable<Buffer>, max?: number) {
    const chunks = []
    for await (const chunk of ndjsonLineChunks(source, max)) chunks.push(chunk)
    return chunks
  }

  it('hands out the lines each piece completes, across piece boundaries and split characters', async () => {
    const euro = Buffer.from('€')
    const source = (async function* () {
      yield Buffer.from('{"a":1}\n{"b":')
      yield Buffer.from('2}\r\n\n{"c":"')
      yield euro.subarray(0, 1)
      yield Buffer.concat([euro.subarray(1), Buffer.from('"}')])
    })()
    expect(await collect(source)).toEqual([
      [{ lineNumber: 1, text: '{"a":1}' }],
      [{ lineNumber: 2, text: '{"b":2}' }],
      [{ lineNumber: 4, text: '{"c":"€"}' }],
    ])
  })

  it('reports a line over the limit as too long and goes on after its newline', async () => {
    const chunks = await collect(pieces('x'.repeat(30), 'y'.repeat(30), '\n{"ok":true}\n'), 40)
    expect(chunks.flat()).toEqual([
      { lineNumber: 1, tooLong: true },
      { lineNumber: 2, text: '{"ok":true}' },
    ])
  })
})

describe('SeenEmails (a dry run’s memory of the request’s e-mails)', () => {
  it('names the first row of a repeated e-mail, across its growth, and never a row of another e-mail', () => {
    const seen = new SeenEmails()
    const count = 200_000
    for (let i = 0; i < count; i++) expect(seen.claim(`user-${i}@example.test`, i)).toBeUndefined()
    expect(seen.size).toBe(count)
    // Every e-mail again, later in the request: each names its own first row.
    for (let i = 0; i < count; i += 997) expect(seen.claim(`user-${i}@example.test`, count + i)).toBe(i)
    expect(seen.claim('user-0@example.test', 5)).toBe(0)
    // Near misses are other e-mails.
    expect(seen.claim('user-0@example.tes', count)).toBeUndefined()
    expect(seen.claim('user-00@example.test', count + 1)).toBeUndefined()
    expect(seen.claim('úser-1@example.test', count + 2)).toBeUndefined()
    expect(seen.size).toBe(count + 3)
  })
})
