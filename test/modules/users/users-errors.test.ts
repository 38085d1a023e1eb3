import { beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { uniqueEmail } from '../../helpers/fixtures.js'
import { FollowingClock, useTestApp } from '../../helpers/test-app.js'
import { userRequests } from '../../helpers/users.js'

/** Platform users (docs/api.md#platform-users): what is refused and how — taken e-mails, invalid fields, unknown ids. */

const t = useTestApp({ clock: new FollowingClock() })
let token: string

beforeAll(async () => {
  token = await t.adminToken()
})

const { createUser, countUsers } = userRequests(
  () => t,
  () => token,
)

describe('users: refusals', () => {
  it('refuses an e-mail that differs only in case with 409 email_taken', async () => {
    const email = uniqueEmail('Case')
    expect((await createUser({ email })).status).toBe(201)
    const again = await createUser({ email: email.toUpperCase() })
    expect(again.status).toBe(409)
    expect(again.body.error.reason).toBe('email_taken')
    expect(again.body.error.message).toContain('already exists')
    expect(again.body.error.attribute).toEqual({ email: 'already exists' })
  })
  it.each([
    ['an e-mail without @', { email: 'not-an-email' }, 'email'],
    ['an e-mail without a dotted domain', { email: 'someone@localhost' }, 'email'],
    ['an e-mail with a space', { email: 'some one@example.test' }, 'email'],
    ['an e-mail with two @', { email: 'two@@example.test' }, 'email'],
    ['an e-mail over 254 characters', { email: `${'a'.repeat(250)}@example.test` }, 'email'],
    ['a missing e-mail', { email: undefined }, 'email'],
    ['a telephone without +', { personalTelephone: '353861234567' }, 'personalTelephone'],
    ['a telephone with letters', { personalTelephone: '+1555CALLNOW' }, 'personalTelephone'],
    ['a telephone over 15 digits', { personalTelephone: '+1234567890123456' }, 'personalTelephone'],
    ['a telephone with a leading 0', { personalTelephone: '+0861234567' }, 'personalTelephone'],
    ['a telephone of one digit', { personalTelephone: '+1' }, 'personalTelephone'],
    ['an unknown role', { roleId: '00000000-0000-4000-8000-000000000000' }, 'roleId'],
    ['a tenant role as the platform role', { roleId: ROLE_IDS.supervisor }, 'roleId'],
    ['a role id that is not a UUID', { roleId: 'admin' }, 'roleId'],
    ['a missing role', { roleId: undefined }, 'roleId'],
    [
      'a tenant role among additionalRoleIds',
      { additionalRoleIds: [ROLE_IDS.platformUser, ROLE_IDS.agent] },
      'additionalRoleIds[1]',
    ],
    [
      'an unknown role among additionalRoleIds',
      { additionalRoleIds: ['00000000-0000-4000-8000-000000000000'] },
      'additionalRoleIds[0]',
    ],
    ['a 10,000-character first name', { firstName: 'x'.repeat(10_000) }, 'firstName'],
    ['a last name with a control character', { lastName: 'Bad\u0000Name' }, 'lastName'],
    ['an unknown status', { status: 'active' }, 'status'],
    ['a boolean status', { status: true }, 'status'],
  ])('answers 400 naming the field for %s, and stores nothing', async (_label, change, field) => {
    const before = await countUsers()
    const body: Record<string, unknown> = { email: uniqueEmail(), roleId: ROLE_IDS.platformUser, ...change }
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key]
    const response = await t.request('POST', '/v1/users', { token, body })
    expect(response.status).toBe(400)
    expect(response.body.error.reason).toBe('validation_failed')
    expect(response.body.error.code).toBe(400)
    expect(response.body.error.attribute).toHaveProperty([field])
    expect(await countUsers()).toBe(before)
  })
  it('answers 404 for an unknown id and 400 for an id that is not a UUID', async () => {
    const unknown = await t.request('GET', '/v1/users/00000000-0000-4000-8000-000000000000', { token })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error.reason).toBe('user_not_found')
    const bad = await t.request('GET', '/v1/users/not-a-uuid', { token })
    expect(bad.status).toBe(400)
    expect(bad.body.error.attribute).toHaveProperty('userId')
  })
})
