import { CompiledQuery, sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/db/database.js'
import { MAX_NAMED, MAX_NAMED_PARAMETERS, StatementNames } from '../../src/db/prepared-pool.js'
import { statementTexts } from '../../src/db/statement-texts.js'
import { createTestDatabase, onServerDatabase, type TestDatabase } from '../helpers/test-database.js'

describe('statement names', () => {
  it('gives one text one name, always the same', () => {
    const names = new StatementNames()
    const first = names.nameFor('select * from users where id = $1', 1)
    expect(first).toMatch(/^tenantry_\d+$/)
    expect(names.nameFor('select * from users where id = $1', 1)).toBe(first)
    expect(names.nameFor('select * from users where email = $1', 1)).not.toBe(first)
  })

  it('leaves transaction control, DDL and statements with many parameters unnamed', () => {
    const names = new StatementNames()
    for (const text of ['begin', 'commit', 'rollback', 'savepoint s1', 'create table t (id int)']) {
      expect(names.nameFor(text, 0), text).toBeUndefined()
    }
    const manyRows = `insert into users (id) values ${Array.from({ length: 65 }, (_, i) => `($${i + 1})`).join(', ')}`
    expect(names.nameFor(manyRows, MAX_NAMED_PARAMETERS + 1)).toBeUndefined()
    expect(names.size).toBe(0)
  })

  it('names a reused shape’s text whatever its size: the shapes bound how many there are', () => {
    const names = new StatementNames()
    const parameters = Array.from({ length: MAX_NAMED_PARAMETERS + 1 }, (_, i) => i)
    const text = `select ${parameters.map((i) => `$${i + 1}::int`).join(', ')} /* ${'x'.repeat(20_000)} */`
    expect(names.nameFor(text, parameters.length)).toBeUndefined()
    const key = `test shape\u0000${crypto.randomUUID()}`
    const compiled = statementTexts.compile(key, parameters, () => CompiledQuery.raw(text, parameters))
    expect(compiled.sql).toBe(text)
    expect(names.nameFor(text, parameters.length)).toMatch(/^tenantry_\d+$/)
  })

  it('stops naming new texts once it holds MAX_NAMED, and keeps the names it gave', () => {
    const names = new StatementNames()
    const first = names.nameFor('select 0', 0)
    for (let i = 1; i < MAX_NAMED; i++) names.nameFor(`select ${i}`, 0)
    expect(names.size).toBe(MAX_NAMED)
    expect(names.nameFor('select 100000', 0)).toBeUndefined()
    expect(names.nameFor('select 0', 0)).toBe(first)
  })
})

describe.skipIf(!onServerDatabase)('a server database', () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(() => database.drop())

  it('receives repeated statements as named prepared statements, parsed once per connection', async () => {
    const handle = await openDatabase({ url: database.url, dataDir: '', poolSize: 1 })
    try {
      for (let i = 0; i < 3; i++) {
        const row = await handle.db
          .selectFrom('regions')
          .select('name')
          .where('name', '=', 'us-east-1')
          .executeTakeFirst()
        expect(row).toBeDefined()
      }
      const prepared = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(
        handle.db,
      )
      const texts = prepared.rows.map((r) => r.statement)
      expect(texts.filter((t) => t.includes('from "regions"'))).toHaveLength(1)
    } finally {
      await handle.close()
    }
  })

  it('sends everything unnamed with prepare: false', async () => {
    const handle = await openDatabase({ url: database.url, dataDir: '', poolSize: 1, prepare: false })
    try {
      await handle.db.selectFrom('regions').select('name').where('name', '=', 'us-east-1').execute()
      const prepared = await sql<{ n: string }>`select count(*) as n from pg_prepared_statements`.execute(
        handle.db,
      )
      expect(Number(prepared.rows[0]?.n)).toBe(0)
    } finally {
      await handle.close()
    }
  })
})
