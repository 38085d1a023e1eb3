import { randomUUID } from 'node:crypto'
import { decodeJwt } from 'jose'
import { describe, expect, it } from 'vitest'
import { sweepExpired } from '../../src/background.js'
import { insertUser } from '../helpers/fixtures.js'
import { useTestApp } from '../helpers/test-app.js'

const t = useTestApp()

describe('the hourly sweep', () => {
  it('drops replay-cache entries and rate-limit windows past their use, and keeps the live ones', async () => {
    const now = t.clock.now().getTime()
    const provider = randomUUID()
    await t.ctx.db
      .insertInto('sso_used_assertions')
      .values([
        { provider_id: provider, assertion_id: 'spent', expires: new Date(now - 1000) },
        { provider_id: provider, assertion_id: 'live', expires: new Date(now + 60_000) },
      ])
      .execute()
    await t.ctx.db
      .insertInto('rate_limit_counters')
      .values([
        { key: `ended-${provider}`, count: 3, reset_at: new Date(now - 2 * 3_600_000) },
        { key: `running-${provider}`, count: 1, reset_at: new Date(now + 60_000) },
      ])
      .execute()

    await sweepExpired(t.ctx)

    const assertions = await t.ctx.db
      .selectFrom('sso_used_assertions')
      .select('assertion_id')
      .where('provider_id', '=', provider)
      .execute()
    expect(assertions.map((a) => a.assertion_id)).toEqual(['live'])
    const counters = await t.ctx.db
      .selectFrom('rate_limit_counters')
      .select('key')
      .where('key', 'like', `%${provider}`)
      .execute()
    expect(counters.map((c) => c.key)).toEqual([`running-${provider}`])
  })

  it('drops sessions whose tokens have all expired, and keeps the live ones', async () => {
    const person = await insertUser(t.ctx.db)
    const issue = (ttl: number) =>
      t.request('POST', '/v1/tokens', { body: { username: person.email, password: person.password, ttl } })
    await issue(60)
    const live = (await issue(3600)).body.token
    t.clock.advance(61_000)

    await sweepExpired(t.ctx)

    const sessions = await t.ctx.db
      .selectFrom('user_sessions')
      .select('id')
      .where('user_id', '=', person.id)
      .execute()
    expect(sessions.map((s) => s.id)).toEqual([decodeJwt(live).sid])
  })
})
