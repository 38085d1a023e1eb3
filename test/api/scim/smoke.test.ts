import { afterAll, beforeAll, expect, it } from 'vitest'
import { uniqueEmail } from '../../helpers/fixtures.js'
import { scimTenant, userBody } from '../../helpers/scim.js'
import { createTestApp, FollowingClock, type TestApp } from '../../helpers/test-app.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp({ clock: new FollowingClock() })
})
afterAll(() => t.close())

it('smoke', async () => {
  const s = await scimTenant(t)
  const spc = await s.scim('GET', '/ServiceProviderConfig')
  console.log(spc.status, spc.headers['content-type'], JSON.stringify(spc.body).slice(0, 200))
  const email = uniqueEmail()
  const created = await s.scim('POST', '/Users', userBody(email))
  console.log(created.status, JSON.stringify(created.body))
  const found = await s.scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}`)
  console.log(found.status, JSON.stringify(found.body))
  const patched = await s.scim('PATCH', `/Users/${created.body.id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'Replace', value: { active: 'False' } }] })
  console.log(patched.status, JSON.stringify(patched.body))
  const g = await s.scim('POST', '/Groups', { displayName: 'Agents', members: [{ value: created.body.id }] })
  console.log(g.status, JSON.stringify(g.body))
  const nf = await s.scim('GET', '/Nope')
  console.log(nf.status, JSON.stringify(nf.body))
  expect(created.status).toBe(201)
})
