import { beforeAll, describe, expect, it } from 'vitest'
import { CANONICAL_TIMEZONES, TIMEZONE_LINKS } from '../../../src/modules/regions/timezone-names.js'
import { documentValidators } from '../../helpers/document-conformance.js'
import { createTenantAsAdmin, REGION_ID, uniqueName } from '../../helpers/fixtures.js'
import { useTestApp } from '../../helpers/test-app.js'

/**
 * The document says exactly which time zones a tenant takes (issue 37 item 8): it allowed `"A"`, which
 * the service refused. Now its pattern lists the accepted names, and the service checks the same list.
 */
const t = useTestApp()
let token: string
let tenantId: string

beforeAll(async () => {
  token = await t.adminToken()
  tenantId = (await createTenantAsAdmin(t)).id
})

interface Document {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: any }> } }>>
}

/** The published schema of `timezone` in the JSON body of an operation. */
function timezoneSchema(path: string, method: string): { pattern: string } {
  const document = t.app.swagger() as Document
  return document.paths[path]![method]!.requestBody!.content['application/json']!.schema.properties.timezone
}

/** The names a pattern of the form ^(?:a|b|…)$ lists. */
function namesListed(pattern: string): string[] {
  const inner = /^\^\(\?:(.*)\)\$$/.exec(pattern)?.[1]
  if (inner === undefined) throw new Error(`not a list of names: ${pattern.slice(0, 80)}`)
  return inner.split('|').map((name) => name.replace(/\\(.)/g, '$1'))
}

describe('the time zones of a tenant', () => {
  it('are published as the same list on create and update', () => {
    const onCreate = timezoneSchema('/v1/tenants', 'post')
    const onUpdate = timezoneSchema('/v1/tenants/{tenantId}', 'put')
    expect(onUpdate.pattern).toBe(onCreate.pattern)
    expect(new Set(namesListed(onCreate.pattern))).toEqual(
      new Set([...CANONICAL_TIMEZONES, ...TIMEZONE_LINKS]),
    )
  })

  it('every name the document lists is accepted by the service', async () => {
    const listed = namesListed(timezoneSchema('/v1/tenants', 'post').pattern)
    expect(listed.length).toBeGreaterThan(500)
    // Each name on a create that fails on its parent alone, which is checked after the time zone: the
    // refusal names parentId and nothing else, so the time zone passed (and nothing is written).
    const noSuchParent = '0193a6f1-2c4e-7d10-9a55-6b1f3c2d4e5f'
    const refused: string[] = []
    for (const timezone of listed) {
      const body = { name: uniqueName(), regionId: REGION_ID, parentId: noSuchParent, timezone }
      const answer = await t.request('POST', '/v1/tenants', { token, body })
      if (answer.status !== 400 || Object.keys(answer.body.error.attribute).join() !== 'parentId') {
        refused.push(`${timezone}: ${answer.status} ${JSON.stringify(answer.body.error?.attribute)}`)
      }
    }
    expect(refused).toEqual([])
    // And stored as sent, canonical names and links alike.
    for (const timezone of ['UTC', 'Europe/Dublin', 'US/Eastern', 'Asia/Kolkata', 'Etc/GMT+5', 'GB-Eire']) {
      const answer = await t.request('PUT', `/v1/tenants/${tenantId}`, { token, body: { timezone } })
      expect(answer.status, timezone).toBe(200)
      expect(answer.body.result.timezone).toBe(timezone)
    }
  })

  it('a name outside the list is refused by the document and by the service, 400 naming timezone', async () => {
    const documentAllows = documentValidators(t.app.swagger() as never)
    const onCreate = documentAllows('POST', '/v1/tenants')!
    const onUpdate = documentAllows('PUT', '/v1/tenants/:tenantId')!
    // "A" is what the fuzzer found; ICU resolves the others, but they are not on the list.
    for (const timezone of [
      'A',
      'america/new_york',
      'US/Pacific-New',
      'SystemV/EST5',
      'UTC ',
      'Mars/Olympus_Mons',
      '',
    ]) {
      const created = { name: uniqueName(), regionId: REGION_ID, timezone }
      expect(onCreate(created), timezone).toBe(false)
      expect(onUpdate({ timezone }), timezone).toBe(false)
      for (const [method, url, body] of [
        ['POST', '/v1/tenants', created],
        ['PUT', `/v1/tenants/${tenantId}`, { timezone }],
      ] as const) {
        const answer = await t.request(method, url, { token, body })
        expect(answer.status, `${method} ${timezone}`).toBe(400)
        expect(answer.body.error.attribute, `${method} ${timezone}`).toHaveProperty('timezone')
      }
    }
  })

  it('GET /v1/timezones lists the canonical names, each accepted', async () => {
    const answer = await t.request('GET', '/v1/timezones', { token })
    expect(answer.body.result).toEqual([...CANONICAL_TIMEZONES])
    expect(answer.body.result).toContain('UTC')
  })

  it('are names this runtime knows, and it knows no canonical name the list lacks', () => {
    const unknown = [...CANONICAL_TIMEZONES, ...TIMEZONE_LINKS].filter((timeZone) => {
      try {
        new Intl.DateTimeFormat('en-US', { timeZone })
        return false
      } catch {
        return true
      }
    })
    expect(unknown).toEqual([])
    // A newer ICU with a new zone fails here: add it to src/modules/regions/timezone-names.ts.
    const accepted = new Set([...CANONICAL_TIMEZONES, ...TIMEZONE_LINKS])
    expect(Intl.supportedValuesOf('timeZone').filter((name) => !accepted.has(name))).toEqual([])
  })
})
