import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTenantAsAdmin } from '../helpers/fixtures.js'
import { createTestApp, type TestApp } from '../helpers/test-app.js'

/**
 * What a 200 is sent as is what the document declares for it (issue 37 item 8): the audit lists answer
 * `text/csv` for `format=csv` or `Accept: text/csv`, and the document declared only JSON.
 */
let t: TestApp
let token: string
let tenantId: string

interface Media {
  schema: object
}
interface Document {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, Media> }> }>>
}

beforeAll(async () => {
  t = await createTestApp()
  token = await t.adminToken()
  // A tenant created is an audit event in both lists.
  tenantId = (await createTenantAsAdmin(t)).id
})
afterAll(async () => {
  await t.close()
})

/** The media types the document gives the 200 of an operation. */
function declared(path: string): Record<string, Media> {
  return (t.app.swagger() as unknown as Document).paths[path]!.get!.responses['200']!.content ?? {}
}

const mediaType = (header: unknown) => String(header).split(';')[0]!.trim()

describe('the audit lists', () => {
  const operations = () => [
    { path: '/v1/audit-events', url: '/v1/audit-events' },
    { path: '/v1/tenants/{tenantId}/audit-events', url: `/v1/tenants/${tenantId}/audit-events` },
  ]

  it('declare JSON and text/csv for their 200', () => {
    for (const { path } of operations()) {
      expect(Object.keys(declared(path)).sort(), path).toEqual(['application/json', 'text/csv'])
      expect(declared(path)['text/csv']!.schema, path).toMatchObject({ type: 'string' })
    }
  })

  it('answer CSV, asked either way, as text/csv: a declared media type, with the header row first', async () => {
    for (const { path, url } of operations()) {
      for (const asked of [
        { url: `${url}?format=csv`, headers: {} },
        { url, headers: { accept: 'text/csv' } },
      ]) {
        const answer = await t.app.inject({
          method: 'GET',
          url: asked.url,
          headers: { ...asked.headers, authorization: `Bearer ${token}` },
        })
        expect(answer.statusCode, asked.url).toBe(200)
        const type = mediaType(answer.headers['content-type'])
        expect(type).toBe('text/csv')
        expect(Object.keys(declared(path))).toContain(type)
        const [header, firstEvent] = answer.body.split('\r\n')
        expect(header).toBe(
          'id,occurred,actorType,actorId,action,tenantId,targetType,targetId,changes,requestId,ip',
        )
        expect(firstEvent).toMatch(/^[0-9a-f-]{36},/)
      }
    }
  })

  it('answer JSON that the declared JSON schema holds', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    ;(addFormats as unknown as (ajv: Ajv2020) => void)(ajv)
    for (const { path, url } of operations()) {
      const answer = await t.request('GET', url, { token })
      expect(answer.status).toBe(200)
      expect(mediaType(answer.headers['content-type'])).toBe('application/json')
      const validate = ajv.compile(declared(path)['application/json']!.schema)
      expect(validate(answer.body), JSON.stringify(validate.errors)).toBe(true)
      expect(answer.body.result.length).toBeGreaterThan(0)
    }
  })
})
