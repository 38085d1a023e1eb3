import { beforeAll, describe, expect, it } from 'vitest'
import { isReusedWriteShape } from '../../../src/outbox/write-unit.js'
import { eventIdsSoFar, eventsSince } from '../../helpers/audit-trail.js'
import { batchFigures, tableLock, whileLocked } from '../../helpers/batching.js'
import { uniqueEmail } from '../../helpers/fixtures.js'
import { scimTenant, userBody } from '../../helpers/scim.js'
import { FollowingClock, useTestApp } from '../../helpers/test-app.js'

/**
 * SCIM's creates through the write unit (docs/performance.md, "The write unit"; docs/scim.md): a new
 * person — platform user, membership, SCIM row and their two events — is one statement, and creates that
 * arrive together share one, each answered alone; a create whose userName another SCIM user of the
 * tenant holds (or takes in the same burst) is refused alone, 409 `uniqueness` as RFC 7644 §3.3 says,
 * and leaves nothing behind.
 */
const t = useTestApp({ clock: new FollowingClock() })
let admin: string
beforeAll(async () => {
  admin = await t.adminToken()
})

const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error'

describe('SCIM creates that arrive together', () => {
  it('share statements, each answered with its own user; a taken userName is refused alone', async () => {
    const s = await scimTenant(t)
    const taken = uniqueEmail('taken')
    expect((await s.scim('POST', '/Users', userBody(taken))).status).toBe(201)
    const emails = Array.from({ length: 12 }, () => uniqueEmail('together'))
    const bodies = emails.map((email) => userBody(email))
    // Another SCIM user of the tenant holds this userName (its e-mail is new), and two of the burst ask
    // for one userName: one of them gets it.
    bodies[3] = userBody(taken.toUpperCase(), { emails: [{ value: emails[3], primary: true }] })
    const twice = uniqueEmail('twice')
    bodies[7] = userBody(twice, { emails: [{ value: emails[7], primary: true }] })
    bodies[8] = userBody(twice, { emails: [{ value: emails[8], primary: true }] })

    const since = await eventIdsSoFar(t.ctx.db)
    const before = await batchFigures('scim_user')
    const responses = await whileLocked(t, tableLock('users'), () =>
      Promise.all(bodies.map((body) => s.scim('POST', '/Users', body))),
    )
    const after = await batchFigures('scim_user')
    // Statements held several creates (a batch a refused create failed ran its creates again alone).
    const statements = after.statements - before.statements
    expect(after.writes - before.writes).toBeGreaterThan(statements)
    expect(isReusedWriteShape('scim_user', 'several')).toBe(true)

    expect(responses[3]?.status).toBe(409)
    expect(responses[3]?.body).toEqual({
      schemas: [ERROR],
      status: '409',
      scimType: 'uniqueness',
      detail: `A user with userName "${taken.toUpperCase()}" already exists`,
    })
    const pair = [responses[7], responses[8]].map((r) => r?.status).sort()
    expect(pair).toEqual([201, 409])
    const lost = responses[7]?.status === 409 ? 7 : 8
    expect(responses[lost]?.body).toMatchObject({ scimType: 'uniqueness', detail: expect.any(String) })

    const refused = new Set([3, lost])
    for (const [i, response] of responses.entries()) {
      if (refused.has(i)) {
        // Nothing of the refused create is left: no platform user with its e-mail.
        const found = await t.request('GET', `/v1/users?email=${encodeURIComponent(emails[i] as string)}`, {
          token: admin,
        })
        expect(found.status, emails[i]).toBe(404)
        continue
      }
      expect(response.status, JSON.stringify(response.body)).toBe(201)
      expect(response.body.emails[0].value).toBe(emails[i])
      const id = response.body.id as string
      expect((await s.scim('GET', `/Users/${id}`)).body.userName).toBe(bodies[i]?.userName)
      expect(await eventsSince(t.ctx.db, since, 'membership', id)).toEqual([
        { action: 'membership.created', changes: expect.any(Object) },
      ])
      expect((await eventsSince(t.ctx.db, since, 'user', id)).map((e) => e.action)).toEqual(['user.created'])
    }
    expect((await s.scim('GET', '/Users')).body.totalResults).toBe(11)
  })
})
