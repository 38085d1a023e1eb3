import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { uniqueEmail } from '../../helpers/fixtures.js'
import {
  ENTERPRISE,
  PATCH_OP,
  type ScimTenant,
  scimTenant,
  USER_SCHEMA,
  userBody,
} from '../../helpers/scim.js'
import { createTestApp, FollowingClock, type TestApp } from '../../helpers/test-app.js'

/** SCIM Users over HTTP (docs/scim.md): membership semantics, the Okta and Entra ID shapes, queries, ETags. */
let t: TestApp
let admin: string
beforeAll(async () => {
  t = await createTestApp({ clock: new FollowingClock() })
  admin = await t.adminToken()
})
afterAll(() => t.close())

const q = (filter: string) => `/Users?filter=${encodeURIComponent(filter)}`
const patch = (...Operations: unknown[]) => ({ schemas: [PATCH_OP], Operations })

async function membership(s: ScimTenant, userId: string) {
  return t.request('GET', `/v1/tenants/${s.tenantId}/users/${userId}`, { token: admin })
}

describe('create (POST /Users)', () => {
  it('creates the platform user (no password, Platform User) and an accepted membership with the default role', async () => {
    const s = await scimTenant(t)
    const email = uniqueEmail('okta')
    // Okta's create: password and groups: [] are ignored.
    const created = await s.scim('POST', '/Users', {
      ...userBody(email),
      displayName: 'Ada L',
      locale: 'en-US',
      externalId: '00ujl29u0le5T6Aj10h7',
      groups: [],
      password: '1mz050nq',
    })
    expect(created.status).toBe(201)
    expect(created.headers['content-type']).toMatch(/^application\/scim\+json/)
    expect(created.headers.location).toBe(`http://tenantry.test${s.base}/Users/${created.body.id}`)
    expect(created.headers.etag).toBe(created.body.meta.version)
    expect(created.body).toMatchObject({
      userName: email,
      displayName: 'Ada L',
      externalId: '00ujl29u0le5T6Aj10h7',
      active: true,
    })
    expect(created.body.password).toBeUndefined()
    const m = await membership(s, created.body.id)
    expect(m.body.result).toMatchObject({
      status: 'accepted',
      roleId: ROLE_IDS.agent,
      firstName: 'Ada',
      lastName: 'Lovelace',
      noPassword: null,
    })
    const user = await t.request('GET', `/v1/users/${created.body.id}`, { token: admin })
    expect(user.body.result).toMatchObject({
      roleId: ROLE_IDS.platformUser,
      hasPassword: false,
      email,
      externalId: '',
    })
    // user.created is a platform event (tenantId null): the platform trail holds both.
    const events = await t.request('GET', `/v1/audit-events?actorId=${s.keyId}`, { token: admin })
    const actions = events.body.result.map((e: { action: string }) => e.action)
    expect(actions).toEqual(expect.arrayContaining(['user.created', 'membership.created']))
    expect(events.body.result[0].actor).toEqual({ type: 'apiKey', id: s.keyId })
  })

  it('links an existing platform user, adopts an existing member, and refuses a second SCIM user with 409 uniqueness', async () => {
    const s = await scimTenant(t)
    const email = uniqueEmail('linked')
    const made = await t.request('POST', '/v1/users', {
      token: admin,
      body: { email, roleId: ROLE_IDS.platformUser, firstName: 'Kept' },
    })
    const linked = await s.scim('POST', '/Users', userBody(email))
    expect(linked.status).toBe(201)
    expect(linked.body.id).toBe(made.body.result.id)
    // Not provisioned by this tenant: the platform names stay.
    expect(
      (await t.request('GET', `/v1/users/${made.body.id ?? made.body.result.id}`, { token: admin })).body
        .result.firstName,
    ).toBe('Kept')
    const again = await s.scim('POST', '/Users', userBody(email.toUpperCase()))
    expect(again.status).toBe(409)
    expect(again.body).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '409',
      scimType: 'uniqueness',
      detail: expect.stringContaining('already exists'),
    })
    const member = uniqueEmail('member')
    await t.request('POST', '/v1/users', {
      token: admin,
      body: { email: member, roleId: ROLE_IDS.platformUser },
    })
    const invited = await t.request('POST', `/v1/tenants/${s.tenantId}/users`, {
      token: admin,
      body: { email: member, roleId: ROLE_IDS.supervisor },
    })
    const adopted = await s.scim('POST', '/Users', userBody(member, { active: undefined }))
    expect(adopted.status).toBe(201)
    expect(adopted.body.id).toBe(invited.body.result.userId)
    expect((await membership(s, adopted.body.id)).body.result.roleId).toBe(ROLE_IDS.supervisor)
  })

  it('takes the e-mail from userName when there are no emails, and answers 400 invalidValue without one', async () => {
    const s = await scimTenant(t)
    const email = uniqueEmail('bare')
    const ok = await s.scim('POST', '/Users', { schemas: [USER_SCHEMA], userName: email })
    expect(ok.status).toBe(201)
    expect(ok.body.active).toBeUndefined()
    const bad = await s.scim('POST', '/Users', { schemas: [USER_SCHEMA], userName: 'no-email-here' })
    expect(bad.status).toBe(400)
    expect(bad.body.scimType).toBe('invalidValue')
    const missing = await s.scim('POST', '/Users', { schemas: [USER_SCHEMA] })
    expect(missing.status).toBe(400)
    const control = await s.scim('POST', '/Users', userBody(uniqueEmail(), { displayName: 'bad\u0001name' }))
    expect(control.status).toBe(400)
    expect(control.body.scimType).toBe('invalidValue')
  })

  it('accepts Entra ID’s create with the enterprise extension, roles: [] and meta, and stores attributes as sent', async () => {
    const s = await scimTenant(t)
    const email = uniqueEmail('entra')
    const created = await s.scim('POST', '/Users', {
      schemas: [USER_SCHEMA, ENTERPRISE],
      externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
      userName: `Test_User_${email}`,
      active: true,
      emails: [{ primary: true, type: 'work', value: email }],
      meta: { resourceType: 'User' },
      name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
      roles: [],
      phoneNumbers: [{ value: '+1 555 0100', type: 'work' }],
      addresses: [{ streetAddress: '1 Main St', locality: 'Springfield', country: 'US', type: 'work' }],
      [ENTERPRISE]: { department: 'Sales', employeeNumber: '42', manager: { value: 'mgr-1' } },
    })
    expect(created.status).toBe(201)
    const read = await s.scim('GET', `/Users/${created.body.id}`)
    expect(read.body.schemas).toEqual([USER_SCHEMA, ENTERPRISE])
    expect(read.body[ENTERPRISE]).toEqual({
      department: 'Sales',
      employeeNumber: '42',
      manager: { value: 'mgr-1' },
    })
    expect(read.body.phoneNumbers).toEqual([{ value: '+1 555 0100', type: 'work' }])
    expect(read.body.roles).toBeUndefined()
    expect(read.body.meta.resourceType).toBe('User')
  })

  it('replays a POST with the same Idempotency-Key and refuses the key with another body', async () => {
    const s = await scimTenant(t)
    const body = userBody(uniqueEmail('idem'))
    const first = await s.scim('POST', '/Users', body, { 'idempotency-key': 'k-1' })
    const replay = await s.scim('POST', '/Users', body, { 'idempotency-key': 'k-1' })
    expect(first.status).toBe(201)
    expect(replay.status).toBe(200)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.body.id).toBe(first.body.id)
    const other = await s.scim('POST', '/Users', userBody(uniqueEmail()), { 'idempotency-key': 'k-1' })
    expect(other.status).toBe(409)
    expect(other.body.schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:Error'])
  })
})

describe('active, DELETE and members SCIM never touched', () => {
  it('active false disables the membership from any status, true enables it; DELETE removes the membership, never the person', async () => {
    const s = await scimTenant(t)
    const email = uniqueEmail('invited')
    await t.request('POST', '/v1/users', { token: admin, body: { email, roleId: ROLE_IDS.platformUser } })
    const invited = await t.request('POST', `/v1/tenants/${s.tenantId}/users`, {
      token: admin,
      body: { email, roleId: ROLE_IDS.agent, status: 'invited' },
    })
    const id = invited.body.result.userId
    const listed = await s.scim('GET', q(`userName eq "${email}"`))
    expect(listed.body.Resources[0]).toMatchObject({
      id,
      userName: email,
      active: false,
      emails: [{ value: email, type: 'work', primary: true }],
    })
    // Entra ID: capitalised op, "False" as a boolean.
    const off = await s.scim(
      'PATCH',
      `/Users/${id}`,
      patch({ op: 'Replace', path: 'active', value: 'False' }),
    )
    expect(off.status).toBe(200)
    expect(off.body.active).toBe(false)
    expect((await membership(s, id)).body.result.status).toBe('disabled')
    // Okta: path-less replace.
    const on = await s.scim('PATCH', `/Users/${id}`, patch({ op: 'replace', value: { active: true } }))
    expect(on.body.active).toBe(true)
    expect((await membership(s, id)).body.result.status).toBe('accepted')
    expect((await s.scim('DELETE', `/Users/${id}`)).status).toBe(204)
    expect((await membership(s, id)).status).toBe(404)
    expect((await t.request('GET', `/v1/users/${id}`, { token: admin })).body.result.email).toBe(email)
    expect((await s.scim('GET', `/Users/${id}`)).status).toBe(404)
    const events = await t.request('GET', `/v1/tenants/${s.tenantId}/audit-events?actorId=${s.keyId}`, {
      token: admin,
    })
    // Newest first: each write one event, the first also holding the attributes SCIM adopted.
    const actions = events.body.result.map((e: { action: string }) => e.action)
    expect(actions).toEqual(['membership.removed', 'membership.status_changed', 'membership.status_changed'])
    expect(events.body.result[2].changes).toMatchObject({
      status: ['invited', 'disabled'],
      userName: [null, email],
    })
  })
})

describe('PATCH forms (Okta, Entra ID)', () => {
  it('applies paths, filters, dotted and URN keys, bare manager ids, and creates emails[type eq "work"] when absent', async () => {
    const s = await scimTenant(t)
    const email = uniqueEmail('patch')
    const created = await s.scim('POST', '/Users', {
      schemas: [USER_SCHEMA],
      userName: email,
      name: { givenName: 'A', familyName: 'B' },
    })
    const id = created.body.id
    const newEmail = uniqueEmail('moved')
    const res = await s.scim(
      'PATCH',
      `/Users/${id}`,
      patch(
        { op: 'Replace', path: 'emails[type eq "work"].value', value: newEmail },
        { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
        { op: 'Add', path: `${ENTERPRISE}:manager`, value: '2819c223-7f76-453a-919d-ab1234567891' },
        {
          op: 'replace',
          value: {
            id: 'ignored',
            'name.givenName': 'Given',
            [`${ENTERPRISE}:department`]: 'Sales',
            displayName: 'G U',
          },
        },
        { op: 'add', path: 'urn:ietf:params:scim:schemas:core:2.0:User:title', value: 'Lead' },
        { op: 'add', path: 'phoneNumbers', value: [{ value: '+15550100', type: 'mobile' }] },
      ),
    )
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      id,
      title: 'Lead',
      displayName: 'G U',
      name: { givenName: 'Given', familyName: 'updatedFamilyName' },
      emails: [{ type: 'work', value: newEmail }],
      phoneNumbers: [{ value: '+15550100', type: 'mobile' }],
      [ENTERPRISE]: { manager: { value: '2819c223-7f76-453a-919d-ab1234567891' }, department: 'Sales' },
    })
    // Provisioned by this tenant: the platform user follows (names, e-mail).
    const user = await t.request('GET', `/v1/users/${id}`, { token: admin })
    expect(user.body.result).toMatchObject({
      firstName: 'Given',
      lastName: 'updatedFamilyName',
      email: newEmail,
    })
    const removed = await s.scim(
      'PATCH',
      `/Users/${id}`,
      patch({ op: 'remove', path: 'phoneNumbers[type eq "mobile"]' }, { op: 'remove', path: 'title' }),
    )
    expect(removed.body.phoneNumbers).toBeUndefined()
    expect(removed.body.title).toBeUndefined()
  })

  it('applies all operations or none, and answers 400 for a bad path, a bad op and a remove without a path', async () => {
    const s = await scimTenant(t)
    const id = (await s.scim('POST', '/Users', userBody(uniqueEmail('atomic')))).body.id
    const before = await s.scim('GET', `/Users/${id}`)
    const failed = await s.scim(
      'PATCH',
      `/Users/${id}`,
      patch({ op: 'replace', path: 'title', value: 'X' }, { op: 'replace', path: 'nosuch', value: 1 }),
    )
    expect(failed.status).toBe(400)
    expect(failed.body.scimType).toBe('invalidPath')
    expect((await s.scim('GET', `/Users/${id}`)).body).toEqual(before.body)
    expect((await s.scim('PATCH', `/Users/${id}`, patch({ op: 'move', path: 'title' }))).status).toBe(400)
    const noPath = await s.scim('PATCH', `/Users/${id}`, patch({ op: 'remove' }))
    expect(noPath.status).toBe(400)
    expect(noPath.body.scimType).toBe('noTarget')
  })

  it('PUT replaces every writable attribute', async () => {
    const s = await scimTenant(t)
    const email = uniqueEmail('put')
    const id = (await s.scim('POST', '/Users', userBody(email, { title: 'Old', nickName: 'N' }))).body.id
    const put = await s.scim('PUT', `/Users/${id}`, userBody(email, { title: 'New', id: 'ignored' }))
    expect(put.status).toBe(200)
    expect(put.body.title).toBe('New')
    expect(put.body.nickName).toBeUndefined()
    expect(put.body.id).toBe(id)
  })
})

describe('queries', () => {
  it('userName eq finds the SCIM user of that name, and a member SCIM never touched whose e-mail it is', async () => {
    const s = await scimTenant(t)
    const shared = uniqueEmail('shared')
    // A SCIM user whose userName is an address that is not its e-mail…
    const named = await s.scim(
      'POST',
      '/Users',
      userBody(shared, { emails: [{ value: uniqueEmail('own'), type: 'work', primary: true }] }),
    )
    expect(named.status).toBe(201)
    const one = await s.scim('GET', q(`userName eq "${shared.toUpperCase()}"`))
    expect(one.body.Resources.map((r: { id: string }) => r.id)).toEqual([named.body.id])
    // …and a member SCIM never touched whose e-mail that address is: both answer to it.
    await t.request('POST', '/v1/users', {
      token: admin,
      body: { email: shared, roleId: ROLE_IDS.platformUser },
    })
    const member = await t.request('POST', `/v1/tenants/${s.tenantId}/users`, {
      token: admin,
      body: { email: shared, roleId: ROLE_IDS.agent, status: 'accepted' },
    })
    expect(member.status).toBe(201)
    const both = await s.scim('GET', q(`userName eq "${shared}"`))
    expect(both.body.Resources.map((r: { id: string }) => r.id).sort()).toEqual(
      [named.body.id, member.body.result.userId].sort(),
    )
    // A SCIM user whose userName is its e-mail is found alone, in one look-up.
    const plain = uniqueEmail('plain')
    const made = await s.scim('POST', '/Users', userBody(plain))
    const found = await s.scim('GET', q(`userName eq "${plain}"`))
    expect(found.body.Resources.map((r: { id: string }) => r.id)).toEqual([made.body.id])
    expect((await s.scim('GET', q(`userName eq "${uniqueEmail('nobody')}"`))).body.totalResults).toBe(0)
  })

  it('filters with eq, pr and and on the listed attributes, pages by startIndex/count in order of creation', async () => {
    const s = await scimTenant(t)
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      const r = await s.scim(
        'POST',
        '/Users',
        userBody(uniqueEmail(`page${i}`), { externalId: `ext-${i}`, active: i !== 2 }),
      )
      ids.push(r.body.id)
    }
    const page = await s.scim('GET', '/Users?startIndex=2&count=2')
    expect(page.body).toMatchObject({ totalResults: 5, startIndex: 2, itemsPerPage: 2 })
    expect(page.body.Resources.map((r: { id: string }) => r.id)).toEqual(ids.slice(1, 3))
    const ext = await s.scim('GET', q('externalId eq "ext-3"'))
    expect(ext.body.Resources.map((r: { id: string }) => r.id)).toEqual([ids[3]])
    expect((await s.scim('GET', q('externalId eq "EXT-3"'))).body.totalResults).toBe(0)
    const inactive = await s.scim('GET', q('active eq false'))
    expect(inactive.body.Resources.map((r: { id: string }) => r.id)).toEqual([ids[2]])
    const both = await s.scim('GET', q(`externalId pr and (id eq "${ids[4]}")`))
    expect(both.body.totalResults).toBe(1)
    const byMail = await s.scim(
      'GET',
      q(`emails[type eq "work"].value eq "${(page.body.Resources[0].userName as string).toUpperCase()}"`),
    )
    expect(byMail.body.Resources[0].id).toBe(ids[1])
    const search = await s.scim('POST', '/Users/.search', {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'],
      filter: 'externalId eq "ext-0"',
      attributes: ['userName'],
    })
    expect(search.body.Resources).toEqual([
      { schemas: [USER_SCHEMA], id: ids[0], userName: expect.any(String), meta: expect.any(Object) },
    ])
    for (const bad of [
      'title eq "x"',
      'userName ne "x"',
      'userName eq "a" or userName eq "b"',
      'userName eq',
      'not (userName pr)',
    ]) {
      const r = await s.scim('GET', q(bad))
      expect(r.status, bad).toBe(400)
      expect(r.body.scimType, bad).toBe('invalidFilter')
    }
  })

  it('honours attributes and excludedAttributes, and ETags: If-None-Match → 304, a stale If-Match → 412', async () => {
    const s = await scimTenant(t)
    const id = (
      await s.scim('POST', '/Users', userBody(uniqueEmail('etag'), { [ENTERPRISE]: { department: 'D' } }))
    ).body.id
    const only = await s.scim('GET', `/Users/${id}?attributes=name.givenName,${ENTERPRISE}:department`)
    expect(only.body).toEqual({
      schemas: expect.any(Array),
      id,
      userName: expect.any(String),
      name: { givenName: 'Ada' },
      [ENTERPRISE]: { department: 'D' },
      meta: expect.any(Object),
    })
    const without = await s.scim('GET', `/Users/${id}?excludedAttributes=emails,name.familyName`)
    expect(without.body.emails).toBeUndefined()
    expect(without.body.name).toEqual({ givenName: 'Ada' })
    const etag = only.headers.etag as string
    expect(etag).toBe(only.body.meta.version)
    expect((await s.scim('GET', `/Users/${id}`, undefined, { 'if-none-match': etag })).status).toBe(304)
    const changed = await s.scim(
      'PATCH',
      `/Users/${id}`,
      patch({ op: 'replace', path: 'title', value: 'T' }),
      { 'if-match': etag },
    )
    expect(changed.status).toBe(200)
    expect(changed.body.meta.version).not.toBe(etag)
    const stale = await s.scim('PATCH', `/Users/${id}`, patch({ op: 'replace', path: 'title', value: 'U' }), {
      'if-match': etag,
    })
    expect(stale.status).toBe(412)
    expect((await s.scim('PUT', `/Users/${id}`, userBody(uniqueEmail()), { 'if-match': etag })).status).toBe(
      412,
    )
    expect((await s.scim('DELETE', `/Users/${id}`, undefined, { 'if-match': etag })).status).toBe(412)
  })
})

describe('wire format', () => {
  it('takes application/json too, refuses other media types with 415, and answers unknown paths and /Bulk in SCIM shape', async () => {
    const s = await scimTenant(t)
    const asJson = await t.request('POST', `${s.base}/Users`, {
      authorization: `Bearer ${s.token}`,
      body: userBody(uniqueEmail('json')),
    })
    expect(asJson.status).toBe(201)
    const text = await t.request('POST', `${s.base}/Users`, {
      authorization: `Bearer ${s.token}`,
      body: 'userName=x',
      headers: { 'content-type': 'text/plain' },
    })
    expect(text.status).toBe(415)
    expect(text.body.schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:Error'])
    const unknown = await s.scim('GET', '/Nowhere/at/all')
    expect(unknown.status).toBe(404)
    expect(Object.keys(unknown.body).sort()).toEqual(['detail', 'schemas', 'status'])
    expect(unknown.headers['x-request-id']).toBeDefined()
    expect((await s.scim('POST', '/Bulk', { Operations: [] })).status).toBe(501)
    const put = await s.scim('PUT', '/Schemas', {})
    expect(put.status).toBe(405)
    expect(put.headers.allow).toBe('GET')
  })

  it('advertises exactly the stored attributes in /Schemas and the features in /ServiceProviderConfig', async () => {
    const s = await scimTenant(t)
    const spc = await s.scim('GET', '/ServiceProviderConfig')
    expect(spc.body).toMatchObject({
      patch: { supported: true },
      bulk: { supported: false },
      sort: { supported: false },
      etag: { supported: true },
      filter: { supported: true, maxResults: 1000 },
    })
    const user = await s.scim('GET', `/Schemas/${USER_SCHEMA}`)
    expect(user.body.attributes.map((a: { name: string }) => a.name)).toEqual([
      'userName',
      'name',
      'displayName',
      'nickName',
      'title',
      'userType',
      'preferredLanguage',
      'locale',
      'timezone',
      'active',
      'emails',
      'phoneNumbers',
      'addresses',
      'groups',
    ])
    const enterprise = await s.scim('GET', `/Schemas/${ENTERPRISE}`)
    expect(enterprise.body.attributes.map((a: { name: string }) => a.name)).toEqual([
      'employeeNumber',
      'costCenter',
      'organization',
      'division',
      'department',
      'manager',
    ])
    expect((await s.scim('GET', '/ResourceTypes/User')).body.schemaExtensions).toEqual([
      { schema: ENTERPRISE, required: false },
    ])
    expect((await s.scim('GET', '/ResourceTypes/Nope')).status).toBe(404)
  })
})
