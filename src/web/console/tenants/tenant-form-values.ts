import type { TenantFormValues } from './tenants.views.js'

/** A new tenant's form before anything is typed. */
export function emptyValues(): TenantFormValues {
  return {
    name: '',
    description: '',
    regionId: '',
    timezone: 'UTC',
    active: true,
    administrator: '',
    cxengageIdentityProvider: 'enabled',
  }
}

/** The tenant form's posted fields (tenants.routes.ts TenantForm), trimmed, as the form shows them again. */
export function valuesOf(form: {
  name?: string
  description?: string
  regionId?: string
  timezone?: string
  active?: 'on'
  administrator?: string
}): TenantFormValues {
  return {
    name: (form.name ?? '').trim(),
    description: (form.description ?? '').trim(),
    regionId: form.regionId ?? '',
    timezone: (form.timezone ?? '').trim(),
    active: form.active === 'on',
    administrator: (form.administrator ?? '').trim().toLowerCase(),
    // The policy is shown, not edited, on this form: its own page changes it.
    cxengageIdentityProvider: 'enabled',
  }
}
