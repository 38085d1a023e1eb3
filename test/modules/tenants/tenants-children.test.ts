import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTenantAsAdmin, memberWithToken } from '../../helpers/fixtures.js'
import { createTestApp, type TestApp } from '../../helpers/test-app.js'

/** `GET /v1/tenants?parentId=`: one level of the tree at a time (the console's tree loads children on demand). */
let t: TestApp

beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const ids = (response: { body: { result: { id: string }[] } }) => response.body.result.map((x) => x.id).sort()

describe('GET /v1/tenants?parentId=', () => {
  it('lists the direct children only; the platform id lists the roots', async () => {
    const token = await t.adminToken()
    const root = await createTenantAsAdmin(t)
    const child = await createTenantAsAdmin(t, { parentId: root.id })
    const grandchild = await createTenantAsAdmin(t, { parentId: child.id })
    expect(ids(await t.request('GET', `/v1/tenants?parentId=${root.id}`, { token }))).toEqual([child.id])
    expect(ids(await t.request('GET', `/v1/tenants?parentId=${child.id}`, { token }))).toEqual([
      grandchild.id,
    ])
    const roots = ids(await t.request('GET', `/v1/tenants?parentId=${t.ctx.platform.id}`, { token }))
    expect(roots).toContain(root.id)
    expect(roots).not.toContain(child.id)
  })

  it('lists only the children the caller can read', async () => {
    const root = await createTenantAsAdmin(t)
    const mine = await createTenantAsAdmin(t, { parentId: root.id })
    await createTenantAsAdmin(t, { parentId: root.id })
    const member = await memberWithToken(t, mine.id)
    const seen = await t.request('GET', `/v1/tenants?parentId=${root.id}`, { token: member.token })
    expect(seen.status).toBe(200)
    expect(ids(seen)).toEqual([mine.id])
    const roots = await t.request('GET', `/v1/tenants?parentId=${t.ctx.platform.id}`, { token: member.token })
    expect(ids(roots)).toEqual([])
  })
})
