import type { Signed } from '../kit/pages.js'

/** Whether to offer the controls that create or change platform users (the API decides, per user). */
export function mayManageUsers(signed: Signed): boolean {
  return (
    signed.login.platformPermissions.includes('MANAGE_ALL_USERS') ||
    signed.login.tenants.some((t) => t.tenantPermissions.includes('MANAGE_ALL_USERS'))
  )
}
