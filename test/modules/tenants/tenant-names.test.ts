import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTenantAsAdmin, REGION_ID, uniqueName } from '../../helpers/fixtures.js'
import { createTestApp, type TestApp } from '../../helpers/test-app.js'

/**
 * A name holds at least one visible character (docs/api.md): a tenant's, a role's, any Name field's. A
 * name made only of characters that draw nothing — zero-width spaces, word joiners, byte-order marks,
 * bidi marks, Hangul fillers, the Braille blank — is refused with 400 naming the field, as one of spaces
 * is, so no link or heading naming the record is empty. The published document's pattern says the same.
 */
let t: TestApp
let token: string

beforeAll(async () => {
  t = await createTestApp()
  token = await t.adminToken()
})
afterAll(() => t.close())

const INVISIBLE_NAMES: [string, string][] = [
  ['U+200B ZERO WIDTH SPACE', '\u200B'],
  ['two U+2060 WORD JOINERs', '\u2060\u2060'],
  ['U+FEFF', '\uFEFF'],
  ['a Hangul filler between spaces', ' \u3164 '],
  ['bidi marks', '\u200E\u200F'],
  ['the Braille blank', '\u2800'],
  ['a combining mark without a base', '\u0301'],
  ['zero-width characters and a space', '\u200B \u200D\u2060'],
]

async function tenantNamed(id: string): Promise<string> {
  return (await t.ctx.db.selectFrom('tenants').select('name').where('id', '=', id).executeTakeFirstOrThrow())
    .name
}

describe('names with no visible character', () => {
  it.each(INVISIBLE_NAMES)(
    'refuses a new tenant named by %s with 400 naming the field',
    async (_label, name) => {
      const response = await t.request('POST', '/v1/tenants', { token, body: { name, regionId: REGION_ID } })
      expect(response.status).toBe(400)
      expect(response.body.error.reason).toBe('validation_failed')
      expect(response.body.error.attribute).toEqual({ name: expect.stringContaining('visible') })
    },
  )

  it('refuses renaming a tenant to one, and the tenant keeps its name', async () => {
    const tenant = await createTenantAsAdmin(t)
    for (const [, name] of INVISIBLE_NAMES) {
      const response = await t.request('PUT', `/v1/tenants/${tenant.id}`, { token, body: { name } })
      expect(response.status, JSON.stringify(name)).toBe(400)
      expect(response.body.error.attribute).toHaveProperty('name')
    }
    expect(await tenantNamed(tenant.id)).toBe(tenant.name)
  })

  it('refuses one as a role name too: every Name field follows the rule', async () => {
    const tenant = await createTenantAsAdmin(t)
    const response = await t.request('POST', `/v1/tenants/${tenant.id}/roles`, {
      token,
      body: { name: '\u200B\u2060', permissions: [] },
    })
    expect(response.status).toBe(400)
    expect(response.body.error.attribute).toHaveProperty('name')
  })

  it('takes names whose letters are visible, whatever invisible characters come with them', async () => {
    for (const name of [`${uniqueName()}\u200B`, `東京 ${uniqueName()}`, `Ame\u0301lie ${uniqueName()}`]) {
      const response = await t.request('POST', '/v1/tenants', { token, body: { name, regionId: REGION_ID } })
      expect(response.status, JSON.stringify(name)).toBe(201)
      expect(response.body.result.name).toBe(name)
    }
  })

  it('says so in the published document: the name pattern refuses them and takes a visible name', async () => {
    const document = (await t.request('GET', '/openapi.json')).body as {
      paths: Record<string, { post: { requestBody: { content: Record<string, { schema: any }> } } }>
    }
    const body = document.paths['/v1/tenants']!.post.requestBody.content['application/json']!.schema
    // A JSON Schema pattern is an ECMAScript one; Unicode property escapes need its `u` flag.
    const pattern = new RegExp(body.properties.name.pattern, 'u')
    for (const [label, name] of INVISIBLE_NAMES) expect(pattern.test(name), label).toBe(false)
    expect(pattern.test('Acme')).toBe(true)
  })
})
