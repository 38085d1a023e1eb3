import { beforeAll, describe, expect, it } from 'vitest'
import { INTEGRATION_TYPES } from '../../../src/modules/integrations/integration-types.js'
import { documentValidators } from '../../helpers/document-conformance.js'
import { createTenantAsAdmin, uniqueName } from '../../helpers/fixtures.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * The document says exactly which integration types the service takes (issue 37 item 8): it allowed
 * `type: ""`, which the service refused. The published pattern is the list of types in any case.
 */
const t = useTestApp()
let token: string
let tenantId: string
let documentAllows: (body: unknown) => boolean

beforeAll(async () => {
  token = await t.adminToken()
  tenantId = (await createTenantAsAdmin(t)).id
  const validate = documentValidators(t.app.swagger() as never)('POST', '/v1/tenants/:tenantId/integrations')!
  documentAllows = (body) => validate(body) === true
})

function create(body: object) {
  return t.request('POST', `/v1/tenants/${tenantId}/integrations`, { token, body })
}

describe('the type of an integration', () => {
  it('every type, in any case, is allowed by the document and taken by the service (stored lower-case)', async () => {
    for (const type of INTEGRATION_TYPES) {
      for (const sent of [type, type.toUpperCase(), type.charAt(0).toUpperCase() + type.slice(1)]) {
        for (const body of [
          { type: sent, name: uniqueName(), properties: {} },
          { attributes: { type: sent, name: uniqueName(), properties: {} } },
        ]) {
          expect(documentAllows(body), JSON.stringify(body)).toBe(true)
          const answer = await create(body)
          expect(answer.status, JSON.stringify(body)).toBe(201)
          expect(answer.body.result.type).toBe(type)
        }
      }
    }
  })

  it('anything else is refused by both: 400 naming type and listing the types', async () => {
    for (const sent of [
      '',
      ' rest',
      'rest ',
      'hubspot',
      'serenova voice',
      'zendes\u212A',
      'RESTful',
      'a'.repeat(65),
    ]) {
      for (const [body, field] of [
        [{ type: sent, properties: {} }, 'type'],
        [{ attributes: { type: sent, properties: {} } }, 'attributes.type'],
      ] as const) {
        expect(documentAllows(body), JSON.stringify(body)).toBe(false)
        const answer = await create(body)
        expect(answer.status, JSON.stringify(body)).toBe(400)
        expect(answer.body.error.attribute, JSON.stringify(body)).toHaveProperty([field])
        expect(answer.body.error.attribute[field]).toContain('serenova-voice')
      }
    }
  })
})
