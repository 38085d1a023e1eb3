import { text } from '../kit/forms.js'
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

/** The tenant form's posted fields, trimmed, as the form shows them again. */
export function valuesOf(form: Record<string, unknown>): TenantFormValues {
  return {
    name: text(form.name).trim(),
    description: text(form.description).trim(),
    regionId: text(form.regionId),
    timezone: text(form.timezone).trim(),
    active: form.active === 'on',
    administrator: text(form.administrator).trim().toLowerCase(),
    cxengageIdentityProvider: text(form.cxengageIdentityProvider) || 'enabled',
  }
}
