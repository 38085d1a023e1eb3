import { expect, it } from 'vitest'
import { uniqueEmail } from './fixtures.js'

/**
 * What every `?q=` search of people promises besides what it finds (GET /v1/users, GET
 * /v1/tenants/{t}/users): LIKE's wildcards taken literally, and pages like every list. `add` makes one
 * person the search can find, with the given e-mail and names; `search` runs the search with extra query
 * text (`&limit=…`).
 */
export function searchContract(o: {
  marker: string
  add: (body: { email: string; firstName?: string; lastName?: string }) => Promise<unknown>
  search: (q: string, extra?: string) => Promise<{ status: number; body: any }>
}): void {
  it('takes % and _ literally', async () => {
    await o.add({ email: uniqueEmail(`${o.marker}pct`), firstName: 'Per', lastName: 'Cent' })
    expect((await o.search('%')).body.result).toEqual([])
    expect((await o.search(`${o.marker}_ct`)).body.result).toEqual([])
  })

  it('pages like every list', async () => {
    const prefix = `${o.marker}page`
    for (let i = 0; i < 3; i++) await o.add({ email: uniqueEmail(`${prefix}${i}`) })
    const first = await o.search(prefix, '&limit=2')
    expect(first.status).toBe(200)
    expect(first.body.result).toHaveLength(2)
    expect(first.body.nextCursor).toBeTypeOf('string')
    const second = await o.search(prefix, `&limit=2&cursor=${first.body.nextCursor}`)
    expect(second.body.result).toHaveLength(1)
    expect(second.body.nextCursor).toBeUndefined()
  })

  it('refuses an empty search with a 400 naming q', async () => {
    const response = await o.search('')
    expect(response.status).toBe(400)
    expect(response.body.error.attribute).toHaveProperty('q')
  })
}
