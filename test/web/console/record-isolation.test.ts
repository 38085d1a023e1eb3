import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { openPage, signIn } from '../../helpers/console.js'
import { useAdminConsole } from '../../helpers/console-admin.js'
import { createTenantAsAdmin, memberWithToken } from '../../helpers/fixtures.js'

/**
 * A record's console pages read it through the tenant in their path (kit/tenant-scope.ts readRecordFor).
 * The attack: an Administrator of one tenant puts another tenant's webhook or integration id under their
 * own tenant in the URL, or opens the other tenant directly. Each answers "Not found" (the other tenant is not visible to them either), and
 * nothing of the record reaches the page; a malformed id is "Not found" without a call.
 */
const c = useAdminConsole()

describe('record pages across tenants', () => {
  it('show no other tenant’s webhook or integration, however the URL names it', async () => {
    const { t, baseUrl, browser } = c
    const admin = await t.adminToken()
    const mine = await createTenantAsAdmin(t)
    const theirs = await createTenantAsAdmin(t)
    const hookUrl = 'http://127.0.0.1:9/their-secret-hook'
    const hook = await t.request('POST', `/v1/tenants/${theirs.id}/webhooks`, {
      token: admin,
      body: { url: hookUrl, events: ['*'] },
    })
    expect(hook.status).toBe(201)
    const integration = await t.request('POST', `/v1/tenants/${theirs.id}/integrations`, {
      token: admin,
      body: { type: 'rest', name: 'Their private integration', properties: {} },
    })
    expect(integration.status).toBe(201)
    const person = await memberWithToken(t, mine.id, ROLE_IDS.administrator)

    const context = await browser.newContext()
    try {
      const { page } = await openPage(context)
      await signIn(page, baseUrl, person.email, person.password)
      const visits = [
        [`/console/tenants/${mine.id}/webhooks/${hook.body.result.id}`, 404, hookUrl],
        [`/console/tenants/${mine.id}/webhooks/${hook.body.result.id}/edit`, 404, hookUrl],
        [`/console/tenants/${theirs.id}/webhooks/${hook.body.result.id}`, 404, hookUrl],
        [`/console/tenants/${mine.id}/integrations/${integration.body.result.id}`, 404, 'Their private'],
        [`/console/tenants/${mine.id}/integrations/${integration.body.result.id}/edit`, 404, 'Their private'],
        [`/console/tenants/${theirs.id}/integrations/${integration.body.result.id}`, 404, 'Their private'],
        [`/console/tenants/${mine.id}/integrations/not-an-id`, 404, 'No such integration'],
        [`/console/tenants/${mine.id}/webhooks/not-an-id`, 404, 'No such webhook'],
        [`/console/tenants/${mine.id}/identity-providers/not-an-id`, 404, 'No such identity provider'],
      ] as const
      for (const [path, status, text] of visits) {
        const response = await page.goto(`${baseUrl}${path}`)
        expect(response?.status(), path).toBe(status)
        const body = await page.content()
        if (text.startsWith('No such')) expect(body, path).toContain(text)
        else expect(body, path).not.toContain(text)
      }
    } finally {
      await context.close()
    }
  })
})
