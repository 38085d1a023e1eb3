import { describe, expect, it } from 'vitest'
import type { Rollback } from './rollback/harness.js'
import { membershipScenes } from './rollback/memberships.js'
import { tenantResourceScenes } from './rollback/tenant-resources.js'
import { tenantAndUserScenes } from './rollback/users.js'

/**
 * A change and its audit event commit together or not at all (docs/webhooks.md), for every write of the API
 * that records an event. Black-box: each write goes through the API, and what it stored is read back
 * through the API, so this holds whether a path writes its event in the change's transaction or in the
 * change's own statement. Faults are injected with throw-away triggers on this test's own database:
 *
 * - the event cannot be written (a trigger on audit_events refuses that action): the write answers an
 *   error and its change is not stored — a path that wrote its event after committing its change would
 *   leave the change behind;
 * - the change cannot be written (a trigger on the change's own table refuses every row): the write
 *   answers an error and no event is stored — a path that wrote its event before its change, on its own,
 *   would leave the event behind.
 *
 * A database failure is the error handler's 500 `internal` (the pages' 500 page; a bulk NDJSON stream's
 * last line): here it is the test's fault injection, not a bug.
 *
 * Not here: `user.login_locked` / `api_key.login_locked`, the one event that records no change (a refused
 * login; its counters are not the event's change), and the worker's events (invitation.expired,
 * webhook.disabled, invitation.email_failed), which no request writes.
 */
// The scenes live in rollback/, a table per group, each run by audit-rollback-<group>.test.ts. Only their
// names and actions are read here: nothing is arranged, so no app is needed.
const noApp = {} as Rollback
const everyScene = [...tenantAndUserScenes(noApp), ...membershipScenes(noApp), ...tenantResourceScenes(noApp)]

describe('a change and its audit event commit together (docs/webhooks.md)', () => {
  it('covers every recordAudit call a request reaches', () => {
    // The audit actions of this table; a new write path with an event belongs in it.
    expect(new Set(everyScene.map((a) => a.action))).toEqual(
      new Set([
        'tenant.created',
        'tenant.updated',
        'user.created',
        'user.updated',
        'user.password_reset_requested',
        'user.password_changed',
        'user.erased',
        'membership.created',
        'membership.invited',
        'membership.role_changed',
        'membership.removed',
        'membership.status_changed',
        'integration.created',
        'integration.updated',
        'integration.deleted',
        'api_key.created',
        'api_key.updated',
        'role.created',
        'role.updated',
        'webhook.created',
        'webhook.updated',
        'identity_provider.created',
        'identity_provider.updated',
        'user.sso_signed_in',
      ]),
    )
  })
})
