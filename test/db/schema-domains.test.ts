import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  API_KEY_STATUSES,
  AUDIT_ACTOR_TYPES,
  AUTH_METHODS,
  FACTOR_STATUSES,
  FACTOR_TYPES,
  MEMBERSHIP_STATUSES,
  MFA_ACCEPT_IDP,
  MFA_CHALLENGE_PURPOSES,
  MFA_POLICIES,
  OUTBOX_STATUSES,
  USER_STATUSES,
} from '../../src/db/schema.js'
import { PROTOCOLS } from '../../src/modules/sso/identity-providers.schemas.js'
import { CLIENT_LOG_LEVELS, IDENTITY_PROVIDER_STATES } from '../../src/modules/tenants/tenants.schemas.js'
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js'

/**
 * Closed lists of values are domains (migration 0012), not CHECK constraints on their tables: PostgreSQL
 * 15 reads a table's CHECK constraints back from text and plans them again in every statement that writes
 * the table — ~10 % of the invitation's statement (docs/performance.md) — while a domain's check is
 * prepared once per connection. The database must still refuse every value outside a list.
 */
let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await database.drop()
})

const CHECK_VIOLATION = '23514'

async function refusal(statement: ReturnType<typeof sql>): Promise<string | undefined> {
  try {
    await statement.execute(database.handle.db)
    return undefined
  } catch (error) {
    return (error as { code?: string }).code
  }
}

describe('closed lists in the schema', () => {
  it('are no table CHECK constraints, which every write would re-read and re-plan', async () => {
    const { rows } = await sql<{ constraint: string }>`
      select conrelid::regclass::text || '.' || conname as constraint from pg_constraint
      where contype = 'c' and conrelid <> 0 and connamespace = current_schema()::regnamespace
    `.execute(database.handle.db)
    expect(rows.map((row) => row.constraint)).toEqual([])
  })

  it.each([
    ['log_level', CLIENT_LOG_LEVELS],
    ['password_sign_in', IDENTITY_PROVIDER_STATES],
    ['sso_protocol', PROTOCOLS],
    ['membership_status', MEMBERSHIP_STATUSES],
    ['outbox_status', OUTBOX_STATUSES],
    ['api_key_status', API_KEY_STATUSES],
    // 'erased' is written by erasure only, never set by a client (db/schema.ts UserStatus).
    ['user_status', [...USER_STATUSES, 'erased']],
    ['actor_type', AUDIT_ACTOR_TYPES],
    ['auth_method', AUTH_METHODS],
    ['factor_type', FACTOR_TYPES],
    ['factor_status', FACTOR_STATUSES],
    ['mfa_challenge_purpose', MFA_CHALLENGE_PURPOSES],
    ['mfa_policy', MFA_POLICIES],
    ['mfa_accept_idp', MFA_ACCEPT_IDP],
  ] as const)('%s holds exactly the values the service writes', async (domain, values) => {
    const { rows } = await sql<{ definition: string }>`
      select pg_get_constraintdef(c.oid) as definition from pg_constraint c
      join pg_type t on t.oid = c.contypid where t.typname = ${domain}
    `.execute(database.handle.db)
    expect(rows).toHaveLength(1)
    const allowed = [...rows[0]!.definition.matchAll(/'([^']*)'/g)].map((match) => match[1])
    expect(allowed.sort()).toEqual([...values].sort())
    for (const value of values) {
      expect(await refusal(sql`select ${value}::text::${sql.raw(domain)}`)).toBeUndefined()
    }
    expect(await refusal(sql`select ${'bogus'}::text::${sql.raw(domain)}`)).toBe(CHECK_VIOLATION)
  })

  it('refuse a value outside the list on a real write, and leave the row as it was', async () => {
    const db = database.handle.db
    const before = await sql<{ status: string }>`select status from users limit 1`.execute(db)
    expect(before.rows).toHaveLength(1)
    expect(await refusal(sql`update users set status = ${'deleted'}`)).toBe(CHECK_VIOLATION)
    expect(await refusal(sql`update tenants set cxengage_identity_provider = ${'sometimes'}`)).toBe(
      CHECK_VIOLATION,
    )
    const after = await sql<{ status: string }>`select status from users limit 1`.execute(db)
    expect(after.rows).toEqual(before.rows)
  })
})
