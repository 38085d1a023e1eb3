import { describe, expect, it } from 'vitest'
import { openSecret, type StoredProperties } from '../../../src/modules/integrations/integration-secrets.js'
import { checkPage } from '../../helpers/console.js'
import { htmlOf, useAdminConsole } from '../../helpers/console-admin.js'
import { createTenantAsAdmin } from '../../helpers/fixtures.js'

/**
 * The integrations pages in a real Chromium (docs/console-admin.md "Integrations"): forms by type with the type's own
 * fields (a Zendesk and an e-mail integration), a secret written once and never in any page before or
 * after a reload, replaced from the edit form, activation refused naming what is missing, a stale edit
 * answered "changed meanwhile", and delete after a confirmation.
 */
const c = useAdminConsole()

/** The secret as stored, decrypted: what the integration will use (the pages never show it). */
async function storedSecret(tenantId: string, id: string, key: string): Promise<string> {
  const row = await c.t.database.handle.db
    .selectFrom('integrations')
    .select('properties')
    .where('id', '=', id)
    .executeTakeFirstOrThrow()
  const properties = row.properties as unknown as StoredProperties
  return openSecret(c.t.ctx.keys, tenantId, id, key, properties[key])
}

describe('integrations pages', () => {
  it('creates a Zendesk integration from its own fields; the secret is write-only; edit, stale edit', async () => {
    const { page, baseUrl, t, errors } = c
    const tenant = await createTenantAsAdmin(t)
    const secret = `zd-secret-${Date.now()}`
    const list = `${baseUrl}/console/tenants/${tenant.id}/integrations`

    await page.goto(`${baseUrl}/console/tenants/${tenant.id}`)
    await page.getByRole('link', { name: 'Integrations' }).click()
    await checkPage(page, 'integrations-empty', errors)
    await page.getByRole('link', { name: 'New integration' }).click()
    await checkPage(page, 'integration-type', errors)
    await page.getByLabel('Type').selectOption('zendesk')
    await page.getByRole('button', { name: 'Continue' }).click()
    // Zendesk's own fields, from its declaration; none of the e-mail type's.
    expect(await page.getByLabel('Endpoint prefix').count()).toBe(1)
    expect(await page.getByLabel('Interaction field ID').count()).toBe(1)
    expect(await page.getByLabel('Work items').count()).toBe(1)
    expect(await page.getByLabel('SMTP host').count()).toBe(0)
    await checkPage(page, 'integration-new-zendesk', errors)

    // Active without the endpoint: refused, the missing setting named beside "Active".
    await page.getByLabel('Name', { exact: true }).fill('Support desk')
    await page.getByLabel('Username').fill('desk@acme.example')
    await page.getByLabel('Password').fill(secret)
    await page.getByLabel('Active', { exact: true }).check()
    await page.getByRole('button', { name: 'Create integration' }).click()
    const refusal = await page.locator('#active-error').textContent()
    expect(refusal).toContain('Active cannot be true while these properties are empty: Endpoint prefix')
    expect(await page.content()).not.toContain(secret)
    errors.length = 0 // the refused form answers 400, which Chromium logs as a failed load
    await checkPage(page, 'integration-activation-refused', errors)

    await page.getByLabel('Endpoint prefix').fill('https://acme.zendesk.example/api/v2')
    await page.getByLabel('Password').fill(secret)
    await page.getByRole('button', { name: 'Create integration' }).click()
    await page.getByRole('heading', { name: 'Support desk' }).waitFor()
    const id = page.url().split('/integrations/')[1]!.split('?')[0]!
    expect(await page.locator('dl.summary').textContent()).toContain('Passwordset')
    expect(await storedSecret(tenant.id, id, 'password')).toBe(secret)
    await checkPage(page, 'integration', errors)

    await page.getByRole('link', { name: 'Edit integration' }).click()
    expect(await page.getByLabel('Password').inputValue()).toBe('')
    expect(await page.getByText('A secret is set: it is never shown.').count()).toBe(1)
    await checkPage(page, 'integration-edit', errors)
    // Left empty, the secret stays; another field changes.
    await page.getByLabel('Username').fill('desk2@acme.example')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    expect(await storedSecret(tenant.id, id, 'password')).toBe(secret)
    // Typed, it replaces the stored one.
    const replaced = `${secret}-replaced`
    await page.getByRole('link', { name: 'Edit integration' }).click()
    await page.getByLabel('Password').fill(replaced)
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    expect(await storedSecret(tenant.id, id, 'password')).toBe(replaced)

    // Neither secret in any page, before or after a reload.
    for (const url of [list, `${list}/${id}`, `${list}/${id}/edit`, `${list}/${id}/delete`]) {
      await page.goto(url)
      await page.reload()
      for (const html of [await page.content(), await htmlOf(page, url)]) {
        expect(html).not.toContain(secret)
        expect(html).not.toContain(replaced)
      }
    }

    // A stale edit: someone saves after the form was opened.
    await page.goto(`${list}/${id}/edit`)
    const admin = await t.adminToken()
    const current = await t.request('GET', `/v1/tenants/${tenant.id}/integrations/${id}`, { token: admin })
    const meanwhile = await t.request('PUT', `/v1/tenants/${tenant.id}/integrations/${id}`, {
      token: admin,
      headers: { 'if-match': current.headers.etag as string },
      body: { description: 'changed elsewhere' },
    })
    expect(meanwhile.status).toBe(200)
    await page.getByLabel('Username').fill('desk3@acme.example')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByRole('heading', { name: 'This integration was changed meanwhile' }).waitFor()
    const after = await t.request('GET', `/v1/tenants/${tenant.id}/integrations/${id}`, { token: admin })
    expect(after.body.result.properties.username).toBe('desk2@acme.example')
    await checkPage(page, 'integration-changed-meanwhile', errors)
  }, 300_000)

  it('an e-mail integration: its fields, activation naming what is missing, delete with confirmation', async () => {
    const { page, baseUrl, t, errors } = c
    const tenant = await createTenantAsAdmin(t)
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}/integrations/new?type=email`)
    expect(await page.getByLabel('Endpoint prefix').count()).toBe(0)
    expect(await page.getByLabel('SMTP encryption type').locator('option').allTextContents()).toEqual([
      'Not set',
      'ssl/tls',
      'starttls',
    ])
    await page.getByLabel('Name', { exact: true }).fill('Mail')
    await page.getByLabel('SMTP port').fill('99999')
    await page.getByRole('button', { name: 'Create integration' }).click()
    expect(await page.locator('#prop-smtpPort-error').textContent()).toContain(
      'SMTP port must be a port number, 1–65535',
    )
    errors.length = 0
    await page.getByLabel('SMTP port').fill('587')
    await page.getByLabel('SMTP encryption type').selectOption('starttls')
    await page.getByRole('button', { name: 'Create integration' }).click()
    await page.getByRole('heading', { name: 'Mail' }).waitFor()
    const url = page.url().split('?')[0]!
    const id = url.split('/integrations/')[1]!

    // Inactive and incomplete: activating names the missing setting.
    await page.getByRole('button', { name: 'Activate integration' }).click()
    expect(await page.getByRole('alert').textContent()).toContain(
      'It cannot be activated while these settings are empty: SMTP host.',
    )
    await checkPage(page, 'integration-activate-refused', errors)
    await page.getByRole('link', { name: 'Edit integration' }).click()
    await page.getByLabel('SMTP host').fill('smtp.acme.example')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByRole('button', { name: 'Activate integration' }).click()
    await page.getByRole('status').filter({ hasText: 'The integration is active.' }).waitFor()

    await page.getByRole('link', { name: 'Delete integration' }).click()
    await page.getByRole('heading', { name: 'Delete Mail?' }).waitFor()
    await checkPage(page, 'integration-delete', errors)
    await page.getByRole('button', { name: 'Delete integration' }).click()
    await page.getByRole('status').filter({ hasText: 'The integration was deleted.' }).waitFor()
    expect(await page.getByRole('link', { name: 'Mail' }).count()).toBe(0)
    const gone = await t.request('GET', `/v1/tenants/${tenant.id}/integrations/${id}`, {
      token: await t.adminToken(),
    })
    expect(gone.status).toBe(404)
  }, 300_000)
})
