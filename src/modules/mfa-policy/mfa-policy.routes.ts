import { Result } from '../../http/schemas.js'
import type { RouteModule } from '../../http/typed-app.js'
import { PlatformSecuritySchema, UpdatePlatformSecurityBody } from './mfa-policy.schemas.js'
import { getPlatformSecurity, updatePlatformSecurity } from './mfa-policy.service.js'
import type { StepUpGuard } from './step-up-guard.js'

const tags = ['security']
const who =
  'Needs the Platform Administrator role itself — no permission is enough alone: another platform role ' +
  'holding MANAGE_TENANT or MANAGE_ALL_USERS is refused (403) — with a credential whose platform ' +
  'permissions count (not a tenant’s single sign-on; with a second factor while the platform requires one).'

/**
 * The platform's security settings (docs/security.md, "Policy"). `requireStepUp`: the step-up guard
 * (modules/mfa/step-up.ts), handed in by app.ts (step-up-guard.ts says why).
 */
export function mfaPolicyRoutes(requireStepUp: StepUpGuard): RouteModule {
  return async (app, ctx) => {
    app.get(
      '/platform/security',
      {
        schema: {
          tags,
          operationId: 'getPlatformSecurity',
          summary: 'Whether platform roles need a second factor',
          description: who,
          errors: ['permission_denied'],
          response: { 200: Result(PlatformSecuritySchema) },
        },
      },
      async (request) => ({ result: await getPlatformSecurity(ctx, request.actor) }),
    )

    app.put(
      '/platform/security',
      {
        schema: {
          tags,
          operationId: 'updatePlatformSecurity',
          summary: 'Require (or stop requiring) a second factor for platform roles',
          description:
            `${who} A step-up operation. While required, a credential won without a second factor carries no ` +
            'platform-role permission; its tenant memberships still count under their tenants’ policies. ' +
            'Turning it on while the caller has no factor of their own is 409 mfa_required_by_policy: it would ' +
            'take their platform permissions away, and with them the power to turn it off. Audited as ' +
            '`platform.security_updated`.',
          errors: ['permission_denied', 'mfa_required_by_policy', 'reauthentication_required'],
          body: UpdatePlatformSecurityBody,
          response: { 200: Result(PlatformSecuritySchema) },
        },
      },
      async (request) => ({
        result: await updatePlatformSecurity(ctx, request.actor, request.body, requireStepUp),
      }),
    )
  }
}
