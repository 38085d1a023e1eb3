import { describe, expect, it } from 'vitest'
import { uniqueEmail } from '../../helpers/fixtures.js'
import { PATCH_OP, scimTenant, userBody } from '../../helpers/scim.js'
import { FollowingClock, useTestApp } from '../../helpers/test-app.js'

/**
 * `emails.value eq` on a user with several addresses (docs/scim.md; issue 37 item 2): a filter on a
 * sub-attribute of a multi-valued attribute matches when any value matches (RFC 7644 §3.4.2.2), while
 * `emails[type eq "work"].value` still asks for the work address only.
 */
const t = useTestApp({ clock: new FollowingClock() })

const q = (filter: string) => `/Users?filter=${encodeURIComponent(filter)}`
const ids = (body: { Resources: { id: string }[] }) => body.Resources.map((r) => r.id).sort()

describe('emails.value eq', () => {
  it('finds a user by its second address, in any case, and the typed filter by its own type only', async () => {
    const s = await scimTenant(t)
    const work = uniqueEmail('work')
    const home = uniqueEmail('home')
    const created = await s.scim('POST', '/Users', {
      ...userBody(work),
      emails: [
        { value: work, type: 'work', primary: true },
        { value: home.toUpperCase(), type: 'home' },
      ],
    })
    expect(created.status).toBe(201)
    const id = created.body.id as string

    const byHome = await s.scim('GET', q(`emails.value eq "${home}"`))
    expect(byHome.status).toBe(200)
    expect(byHome.body.totalResults).toBe(1)
    expect(byHome.body.Resources[0].id).toBe(id)
    expect((await s.scim('GET', q(`emails.value eq "${home.toUpperCase()}"`))).body.totalResults).toBe(1)
    expect((await s.scim('GET', q(`emails.value eq "${work}"`))).body.totalResults).toBe(1)
    const searched = await s.scim('POST', '/Users/.search', { filter: `emails.value eq "${home}"` })
    expect(searched.body.totalResults).toBe(1)

    expect((await s.scim('GET', q(`emails[type eq "work"].value eq "${home}"`))).body.totalResults).toBe(0)
    expect((await s.scim('GET', q(`emails[type eq "home"].value eq "${home}"`))).body.totalResults).toBe(1)
    expect((await s.scim('GET', q(`emails[type eq "work"].value eq "${work}"`))).body.totalResults).toBe(1)
  })

  it('finds every user that lists a shared address, and follows the addresses as PATCH changes them', async () => {
    const s = await scimTenant(t)
    const shared = uniqueEmail('family')
    const made: string[] = []
    for (const prefix of ['parent', 'child']) {
      const own = uniqueEmail(prefix)
      const created = await s.scim('POST', '/Users', {
        ...userBody(own),
        emails: [
          { value: own, type: 'work', primary: true },
          { value: shared, type: 'home' },
        ],
      })
      expect(created.status).toBe(201)
      made.push(created.body.id)
    }
    expect(ids((await s.scim('GET', q(`emails.value eq "${shared}"`))).body)).toEqual([...made].sort())

    // The parent's home address goes, and another comes: the look-up follows the stored attributes.
    const other = uniqueEmail('other')
    const patched = await s.scim('PATCH', `/Users/${made[0]}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', path: 'emails[type eq "home"].value', value: other }],
    })
    expect(patched.status).toBe(200)
    expect(ids((await s.scim('GET', q(`emails.value eq "${shared}"`))).body)).toEqual([made[1]])
    expect(ids((await s.scim('GET', q(`emails.value eq "${other}"`))).body)).toEqual([made[0]])
  })
})
