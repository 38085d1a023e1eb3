import { describe, expect, it } from 'vitest'
import { checkPage } from '../../helpers/console.js'
import { useAdminConsole } from '../../helpers/console-admin.js'
import { createTenantAsAdmin, memberWithToken, uniqueName } from '../../helpers/fixtures.js'

/**
 * Roles in the console (docs/console-admin.md), in a real Chromium: create and edit a tenant role with permission
 * check-boxes; for a person who may manage roles but holds only some permissions, the others are
 * disabled with the reason before they try (the role ceiling made visible).
 */
const c = useAdminConsole()

describe('role pages', () => {
  it('creates and edits a role with permission check-boxes', async () => {
    const { page, baseUrl, t, errors } = c
    const tenant = await createTenantAsAdmin(t, { name: uniqueName('Roles') })
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}`)
    await page.getByRole('link', { name: 'Roles' }).click()
    await checkPage(page, 'roles', errors)
    await page.getByRole('link', { name: 'New role' }).click()
    await checkPage(page, 'role-new', errors)
    await page.getByLabel('Name').fill('Night shift')
    await page.getByLabel('VIEW_ALL_USERS').check()
    await page.getByLabel('MANAGE_TENANT_ENROLLMENT').check()
    await page.getByRole('button', { name: 'Create role' }).click()
    await page.getByRole('link', { name: 'Night shift', exact: true }).click()
    expect(await page.getByLabel('VIEW_ALL_USERS').isChecked()).toBe(true)
    expect(await page.getByLabel('MANAGE_TENANT', { exact: true }).isChecked()).toBe(false)
    await checkPage(page, 'role-edit', errors)
    await page.getByLabel('Name').fill('Late shift')
    await page.getByLabel('VIEW_ALL_USERS').uncheck()
    await page.getByRole('button', { name: 'Save changes' }).click()
    expect(await page.getByRole('link', { name: 'Late shift', exact: true }).count()).toBe(1)
    expect(await page.getByRole('link', { name: 'History of Late shift' }).count()).toBe(1)
    await checkPage(page, 'roles-custom', errors)
    const roles = await t.request('GET', `/v1/tenants/${tenant.id}/roles`, { token: await t.adminToken() })
    const role = roles.body.result.find((r: { name: string }) => r.name === 'Late shift')
    expect(role.permissions).toHaveLength(1)
  }, 240_000)

  it('shows what a person may not grant disabled, with the reason, before they try', async () => {
    const { baseUrl, t, browser } = c
    const tenant = await createTenantAsAdmin(t, { name: uniqueName('Ceiling') })
    const admin = await t.adminToken()
    const managers = await t.request('POST', `/v1/tenants/${tenant.id}/roles`, {
      token: admin,
      body: { name: 'Role managers', permissions: ['MANAGE_ALL_ROLES', 'VIEW_ALL_ROLES'] },
    })
    expect(managers.status).toBe(201)
    const person = await memberWithToken(t, tenant.id, managers.body.result.id)
    const context = await browser.newContext()
    const page = await context.newPage()
    page.setDefaultTimeout(20_000)
    const errors: string[] = []
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text())
    })
    await page.goto(`${baseUrl}/console`)
    await page.getByLabel('E-mail').fill(person.email)
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByLabel('Password').fill(person.password)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.goto(`${baseUrl}/console/tenants/${tenant.id}/roles/new`)
    expect(await page.getByLabel('MANAGE_ALL_ROLES').isDisabled()).toBe(false)
    expect(await page.getByLabel('MANAGE_TENANT', { exact: true }).isDisabled()).toBe(true)
    expect(await page.getByText('you cannot grant it').count()).toBeGreaterThan(5)
    await checkPage(page, 'role-new-ceiling', errors)
    await context.close()
  }, 240_000)
})
