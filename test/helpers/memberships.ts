import { ROLE_IDS } from '../../src/access/permissions.js'
import type { TestApp } from './test-app.js'

/**
 * The membership requests the memberships tests share, over HTTP, for the test file's app and default
 * token (both set in its beforeAll, hence the getters); `outboxRows` is the one named look into the
 * database, where a test must see that mail was (or was not) queued.
 */
export function membershipRequests(app: () => TestApp, defaultToken: () => string) {
  return {
    invite(tenantId: string, body: Record<string, unknown>, as = defaultToken()) {
      return app().request('POST', `/v1/tenants/${tenantId}/users`, {
        token: as,
        body: { roleId: ROLE_IDS.agent, ...body },
      })
    },
    update(tenantId: string, userId: string, body: Record<string, unknown>, as = defaultToken()) {
      return app().request('PUT', `/v1/tenants/${tenantId}/users/${userId}`, { token: as, body })
    },
    outboxRows(tenantId: string) {
      return app()
        .database.handle.db.selectFrom('outbox')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .execute()
    },
  }
}
