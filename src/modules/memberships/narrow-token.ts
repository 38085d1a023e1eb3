import type { ServiceContext } from '../../context.js'
import { unauthorized } from '../auth/unauthorized.js'
import type { NarrowCredential } from '../users/narrow-credential.js'
import { lookUpResetToken, resetTokenRefused } from '../users/password-reset.service.js'
import { invitationUnusable, lookUpInvitation } from './acceptance.service.js'
import { invitationLimits } from './invitation-limits.js'

/**
 * A one-time token sent as `Authorization: Token <token>` to the user routes, resolved to the narrow
 * credential it is (users/narrow-credential.ts says what each may do): a live password-reset link, else a
 * live invitation. An expired reset link is 401 reset_token_expired, an expired invitation 410; anything
 * else 401. Look-ups count against the client address like the invitation page's. The app hands this to
 * the user routes (app.ts), since an invitation is this module's to look up.
 */
export async function resolveNarrowToken(
  ctx: ServiceContext,
  token: string,
  address: string,
): Promise<NarrowCredential> {
  await invitationLimits(ctx).checkLookup(address)
  const reset = await lookUpResetToken(ctx, token)
  if (reset?.state === 'live') return { kind: 'reset', token, user: reset.user }
  if (reset?.state === 'expired') throw resetTokenRefused(true)
  const lookup = await lookUpInvitation(ctx, token, address)
  if (lookup.state === 'live') return { kind: 'invitation', token, userId: lookup.row.user_id }
  if (lookup.state === 'expired') throw invitationUnusable(lookup)
  throw unauthorized('Invalid, used or replaced token')
}
