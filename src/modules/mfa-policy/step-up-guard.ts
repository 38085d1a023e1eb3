import type { Actor } from '../../access/actor.js'
import type { ServiceContext } from '../../context.js'

/**
 * The step-up guard (docs/security.md, "Step-up"): returns when the caller may make a sensitive change —
 * a second factor at most ten minutes old, or no factor to step up with — else throws 401
 * reauthentication_required carrying the challenge. modules/mfa/step-up.ts implements it; mfa builds on
 * this module, so app.ts hands it to the routes that need it (the tenant's policy fields, platform
 * security) rather than this module importing it.
 */
export type StepUpGuard = (ctx: ServiceContext, actor: Actor) => Promise<void>
