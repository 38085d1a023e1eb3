import { describe, expect, it } from 'vitest'
import { ROLE_IDS } from '../../../src/access/permissions.js'
import { checkPage } from '../../helpers/console.js'
import { htmlOf, useAdminConsole } from '../../helpers/console-admin.js'
import { createTenantAsAdmin, uniqueName } from '../../helpers/fixtures.js'

/**
 * API keys and SCIM in the console (docs/console-admin.md), in a real Chromium: a key's secret and a SCIM token are in
 * the HTML of their one "shown once" page and of no other page, before or after a reload; the secret
 * works and stops working once the key is disabled from the page; the SCIM settings (base URL, default
 * role, a directory group mapped to a role) are set from the page.
 */
const c = useAdminConsole()

describe('API keys and SCIM pages', () => {
  it('creates a key whose secret is shown once, never again; disabling it from the page stops it', async () => {
    const { page, baseUrl, t, errors } = c
    const tenant = await createTenantAsAdmin(t, { name: uniqueName('Keys') })
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}`)
    await page.getByRole('link', { name: 'API keys' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`API keys of ${tenant.name}`)
    await checkPage(page, 'api-keys-empty', errors)
    await page.getByRole('link', { name: 'New API key' }).click()
    await checkPage(page, 'api-key-new', errors)

    // A refused form names the field.
    await page.getByRole('button', { name: 'Create API key' }).click()
    expect(await page.getByRole('alert').textContent()).toContain('Name')
    // The refused form answers 400, which Chromium logs as a failed load: that one is expected.
    errors.length = 0
    await page.getByLabel('Name').fill('CRM sync')
    await page.getByLabel('Role').selectOption({ label: 'Supervisor' })
    const created = page.waitForResponse((r) => r.request().method() === 'POST')
    await page.getByRole('button', { name: 'Create API key' }).click()
    const response = await created
    expect(response.headers()['cache-control']).toBe('no-store')
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('API key created')
    const secret = (await page.locator('[data-secret]').textContent()) ?? ''
    expect(secret.length).toBeGreaterThan(20)
    const keyId = (await page.locator('dd code').first().textContent()) ?? ''
    expect(await page.content()).toContain(secret)
    await checkPage(page, 'api-key-shown-once', errors)

    // The secret is real: the key authenticates with it.
    const basic = `Basic ${Buffer.from(`${keyId}:${secret}`).toString('base64')}`
    expect((await t.request('GET', `/v1/tenants/${tenant.id}`, { authorization: basic })).status).toBe(200)

    // A reload sends the form again: the key is not created twice and the secret is not shown again.
    await page.reload()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('This key was already created')
    expect(await page.content()).not.toContain(secret)
    const list = await t.request('GET', `/v1/tenants/${tenant.id}/api-keys`, { token: await t.adminToken() })
    expect(list.body.result).toHaveLength(1)

    for (const path of ['', '/api-keys', '/api-keys/new', '/scim'])
      expect(await htmlOf(page, `${baseUrl}/console/tenants/${tenant.id}${path}`)).not.toContain(secret)

    await page.goto(`${baseUrl}/console/tenants/${tenant.id}/api-keys`)
    expect(await page.getByRole('cell', { name: 'CRM sync', exact: true }).count()).toBe(1)
    await checkPage(page, 'api-keys', errors)
    await page.getByRole('button', { name: 'Disable CRM sync' }).click()
    await page.getByRole('button', { name: 'Enable CRM sync' }).waitFor()
    expect(await page.content()).not.toContain(secret)
    expect((await t.request('GET', `/v1/tenants/${tenant.id}`, { authorization: basic })).status).toBe(401)
  }, 180_000)

  it('sets SCIM up from its page: a token shown once, the base URL, the default role, a group mapped to a role', async () => {
    const { page, baseUrl, t, errors } = c
    const tenant = await createTenantAsAdmin(t, { name: uniqueName('Scim') })
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}`)
    await page.getByRole('link', { name: 'SCIM', exact: true }).click()
    expect(await page.getByText(`/scim/v2/tenants/${tenant.id}`).count()).toBe(1)
    await page.getByRole('link', { name: 'New SCIM token' }).click()
    expect(await page.getByLabel('Kind').inputValue()).toBe('scim')
    await page.getByLabel('Name').fill('Okta')
    await page.getByLabel('Role').selectOption({ label: 'Administrator' })
    await page.getByRole('button', { name: 'Create API key' }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('SCIM token created')
    const token = (await page.locator('[data-secret]').textContent()) ?? ''
    expect(token.length).toBeGreaterThan(20)
    await checkPage(page, 'scim-token-shown-once', errors)

    // The directory pushes a group with the token; the page maps it to a role.
    const group = await t.request('POST', `/scim/v2/tenants/${tenant.id}/Groups`, {
      authorization: `Bearer ${token}`,
      headers: { 'content-type': 'application/scim+json' },
      body: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Supervisors' },
    })
    expect(group.status).toBe(201)

    await page.getByRole('link', { name: 'Done: back to the SCIM settings' }).click()
    expect(await page.content()).not.toContain(token)
    expect(await page.getByText('Okta').count()).toBeGreaterThan(0)
    await page.getByLabel('Default role').selectOption({ label: 'Supervisor' })
    await page.getByRole('button', { name: 'Save default role' }).click()
    expect(await page.getByRole('status').textContent()).toContain('Saved')
    await page.getByLabel('Role of Supervisors').selectOption({ label: 'Supervisor' })
    await page.getByLabel('Priority of Supervisors').fill('5')
    await page.getByRole('button', { name: 'Save Supervisors' }).click()
    expect(await page.getByRole('status').textContent()).toContain('Saved')
    await checkPage(page, 'scim', errors)
    expect(await page.content()).not.toContain(token)

    const admin = await t.adminToken()
    const settings = await t.request('GET', `/v1/tenants/${tenant.id}/scim`, { token: admin })
    expect(settings.body.result.defaultRoleId).toBe(ROLE_IDS.supervisor)
    const groups = await t.request('GET', `/v1/tenants/${tenant.id}/scim/groups`, { token: admin })
    expect(groups.body.result[0]).toMatchObject({
      displayName: 'Supervisors',
      roleId: ROLE_IDS.supervisor,
      priority: 5,
    })
  }, 180_000)
})
