import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/test-app.js'

/**
 * The reference at /docs and the document at /openapi.json carry the headers every other page does
 * (issue 37 item 13): no framing by another site, and a Cache-Control.
 */
let t: TestApp

beforeAll(async () => {
  t = await createTestApp()
})
afterAll(async () => {
  await t.close()
})

describe('the reference and the document', () => {
  it.each([
    ['/docs', 'text/html'],
    ['/docs/', 'text/html'],
    ['/docs/static/swagger-initializer.js', 'javascript'],
    ['/docs/static/swagger-ui.css', 'text/css'],
    ['/docs/json', 'application/json'],
    ['/openapi.json', 'application/json'],
  ])('%s may not be framed and says how to cache it', async (url, type) => {
    const answer = await t.request('GET', url)
    expect(answer.status).toBe(200)
    expect(String(answer.headers['content-type'])).toContain(type)
    expect(answer.headers['x-frame-options']).toBe('DENY')
    expect(String(answer.headers['content-security-policy'])).toContain("frame-ancestors 'none'")
    expect(answer.headers['x-content-type-options']).toBe('nosniff')
    expect(answer.headers['cache-control']).toMatch(/\S/)
    expect(answer.headers['x-request-id']).toBeDefined()
  })

  it('is revalidated on every use, so a deploy’s new document is what the page shows', async () => {
    for (const url of ['/docs', '/openapi.json']) {
      expect((await t.request('GET', url)).headers['cache-control']).toBe('no-cache')
    }
    expect((await t.request('GET', '/openapi.json')).body.openapi).toBe('3.1.0')
  })
})
