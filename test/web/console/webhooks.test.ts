import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkPage } from '../../helpers/console.js'
import { type AdminConsole, htmlOf, startAdminConsole } from '../../helpers/console-admin.js'
import { createTenantAsAdmin, uniqueName } from '../../helpers/fixtures.js'
import { WebhookReceiver } from '../../helpers/webhook-receiver.js'

/**
 * Webhooks in the console (docs/console-admin.md), in a real Chromium, against a receiver on loopback that verifies
 * every message with the `standardwebhooks` package: create (the secret on its one page), a test event,
 * a secret rotation from the page during which both secrets verify, a redelivery under the same
 * webhook-id, edit, disable and re-enable; the secrets in no other page.
 */
let c: AdminConsole
let receiver: WebhookReceiver

beforeAll(async () => {
  c = await startAdminConsole()
  receiver = await new WebhookReceiver(() => c.t.clock.now()).start()
}, 300_000)
afterAll(async () => {
  await receiver?.stop()
  await c?.close()
})

describe('webhook pages', () => {
  it('creates, tests, rotates, redelivers, edits, disables and re-enables a webhook', async () => {
    const { page, baseUrl, t, errors } = c
    const tenant = await createTenantAsAdmin(t, { name: uniqueName('Hooks') })
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}`)
    await page.getByRole('link', { name: 'Webhooks' }).click()
    await checkPage(page, 'webhooks-empty', errors)
    await page.getByRole('link', { name: 'New webhook' }).click()
    await checkPage(page, 'webhook-new', errors)
    await page.getByLabel('URL').fill(receiver.url)
    await page.getByLabel('Events').fill('tenant.updated, membership.*')
    await page.getByRole('button', { name: 'Create webhook' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Webhook created')
    const first = (await page.locator('[data-secret]').textContent()) ?? ''
    expect(first).toMatch(/^whsec_/)
    receiver.secrets.set('first', first)
    await checkPage(page, 'webhook-secret-shown-once', errors)

    await page.getByRole('link', { name: 'Done: back to the webhook' }).click()
    const hookUrl = page.url()
    expect(await page.content()).not.toContain(first)
    await page.getByRole('button', { name: 'Send test event' }).click()
    expect(await page.getByRole('status').textContent()).toContain('The test event was delivered')
    expect(receiver.received.map((m) => m.verifiedWith)).toEqual([['first']])
    const testId = receiver.received[0]?.id

    // Rotation from the page: the new secret on its page; for 24 h a receiver holding either verifies.
    await page.getByRole('button', { name: 'Rotate secret' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Signing secret rotated')
    const second = (await page.locator('[data-secret]').textContent()) ?? ''
    expect(second).toMatch(/^whsec_/)
    expect(second).not.toBe(first)
    await checkPage(page, 'webhook-secret-rotated', errors)
    receiver.secrets.set('second', second)
    await page.goto(hookUrl)
    await page.getByRole('button', { name: 'Send test event' }).click()
    expect(receiver.received.at(-1)?.verifiedWith.sort()).toEqual(['first', 'second'])
    receiver.secrets.delete('first')

    // Redeliver the first test event: the same webhook-id, verified with the new secret.
    await page.getByRole('button', { name: 'Redeliver attempt 1 of webhook.test' }).last().click()
    expect(await page.getByRole('status').textContent()).toContain('Redelivered')
    expect(receiver.received.at(-1)).toMatchObject({ id: testId, verifiedWith: ['second'] })
    expect(await page.getByRole('cell', { name: 'webhook.test', exact: true }).count()).toBe(3)
    await checkPage(page, 'webhook', errors)

    await page.getByRole('link', { name: 'Edit webhook' }).click()
    await checkPage(page, 'webhook-edit', errors)
    await page.getByLabel('Events').fill('*')
    await page.getByLabel('Include sub-tenants').check()
    await page.getByRole('button', { name: 'Save changes' }).click()
    expect(await page.getByRole('status').textContent()).toContain('Saved')
    expect(await page.getByRole('definition').filter({ hasText: 'Included' }).count()).toBe(1)

    await page.getByRole('button', { name: 'Disable webhook' }).click()
    expect(await page.getByRole('status').textContent()).toContain('disabled')
    await page.getByRole('button', { name: 'Re-enable webhook' }).click()
    expect(await page.getByRole('status').textContent()).toContain('enabled again')

    const hook = (
      await t.request('GET', `/v1/tenants/${tenant.id}/webhooks`, { token: await t.adminToken() })
    ).body.result[0]
    expect(hook).toMatchObject({ events: ['*'], includeSubTenants: true, active: true })
    for (const path of ['', '/webhooks', `/webhooks/${hook.id}`, `/webhooks/${hook.id}/edit`]) {
      const markup = await htmlOf(page, `${baseUrl}/console/tenants/${tenant.id}${path}`)
      expect(markup).not.toContain(first)
      expect(markup).not.toContain(second)
    }
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}/webhooks`)
    await checkPage(page, 'webhooks', errors)
  }, 240_000)
})
