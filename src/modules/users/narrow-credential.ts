import type { ServiceContext } from '../../context.js'
import { hashPassword } from '../../crypto/passwords.js'
import type { UserRow } from '../../db/schema.js'
import { AppError } from '../../errors.js'
import { preconditionFailed } from '../../http/etag.js'
import { ifMatchIsStale } from '../../http/request-context.js'
import { type Changes, MASKED } from '../../outbox/audit-event.js'
import { recordAudit } from '../../outbox/audit-trail.js'
import { unauthorized } from '../auth/unauthorized.js'
import { resetPasswordWithToken, selfActor } from './password-reset.service.js'
import { changedUserFields } from './user-changes.js'
import { findUserById, updateNamesAndFirstPassword } from './users.repository.js'
import type { UpdateUserInput, User } from './users.schemas.js'
import { toUser } from './users.service.js'

/**
 * The one-time tokens as narrow credentials (docs/api.md#passwords-and-the-existing-clients-flows), sent as `Authorization: Token <token>` by the
 * existing admin UI:
 * - an invitation token may read its user, set that user's names and — only while it has none — its
 *   password, and accept its invitation (memberships.routes.ts);
 * - a password-reset token may set its user's password.
 * Anything else with either is 401. A dead token (used, cancelled, replaced, unknown) is 401; an expired
 * invitation is 410 invitation_expired, an expired reset link 401 reset_token_expired. Failed look-ups
 * count against the client address like the invitation page's.
 */
export type NarrowCredential =
  | { kind: 'reset'; token: string; user: UserRow }
  | { kind: 'invitation'; token: string; userId: string }

/**
 * What a one-time token is as a credential, or its refusal. An invitation token is the memberships
 * module's to look up, so the app hands its resolver to the user routes (memberships/narrow-token.ts):
 * users never import memberships, which imports users.
 */
export type NarrowTokenResolver = (
  ctx: ServiceContext,
  token: string,
  address: string,
) => Promise<NarrowCredential>

function userOf(credential: NarrowCredential): string {
  return credential.kind === 'reset' ? credential.user.id : credential.userId
}

/** Refuses a request outside what the credential allows, naming what it does allow. */
function outsideScope(credential: NarrowCredential): AppError {
  return unauthorized(
    credential.kind === 'reset'
      ? 'A password-reset token can only set the password of its own user'
      : 'An invitation token can only read its user, set its names and first password, and accept the invitation',
  )
}

/** `GET /v1/users/{id}` with a narrow credential: its own user only. */
export async function getUserWithToken(
  ctx: ServiceContext,
  credential: NarrowCredential,
  userId: string,
): Promise<User> {
  if (userId.toLowerCase() !== userOf(credential)) throw outsideScope(credential)
  const row = await findUserById(ctx.db, userOf(credential))
  if (!row) throw outsideScope(credential)
  return toUser(row)
}

const RESET_FIELDS = new Set(['password'])
const INVITATION_FIELDS = new Set(['firstName', 'lastName', 'password'])

/** `PUT /v1/users/{id}` with a narrow credential. */
export async function updateUserWithToken(
  ctx: ServiceContext,
  credential: NarrowCredential,
  userId: string,
  input: UpdateUserInput,
): Promise<User> {
  if (userId.toLowerCase() !== userOf(credential)) throw outsideScope(credential)
  const user = credential.kind === 'reset' ? credential.user : await findUserById(ctx.db, userOf(credential))
  if (!user) throw outsideScope(credential)
  // Judged on what the body changes (docs/api.md#passwords-and-the-existing-clients-flows): the older admin UI sends the whole profile back, with
  // `externalId: null` for an empty one, beside the names and password this token may set.
  const fields = changedUserFields(user, input)
  const allowed = credential.kind === 'reset' ? RESET_FIELDS : INVITATION_FIELDS
  if (fields.some((field) => !allowed.has(field))) throw outsideScope(credential)

  if (credential.kind === 'reset') {
    if (input.password === undefined)
      throw new AppError('validation_failed', 'password is required', { password: 'is required' })
    return toUser(await resetPasswordWithToken(ctx, credential.token, input.password, userId))
  }

  // The invitation token never replaces a password: a user who has one uses its login or a reset.
  if (input.password !== undefined && user.password_hash !== null) throw outsideScope(credential)
  const passwordHash = input.password === undefined ? undefined : await hashPassword(input.password)
  const now = ctx.clock.now()
  const changes: Changes = {}
  const set: Partial<Record<'first_name' | 'last_name', string>> = {}
  if (input.firstName !== undefined && (input.firstName ?? '') !== user.first_name) {
    set.first_name = input.firstName ?? ''
    changes.firstName = [user.first_name, set.first_name]
  }
  if (input.lastName !== undefined && (input.lastName ?? '') !== user.last_name) {
    set.last_name = input.lastName ?? ''
    changes.lastName = [user.last_name, set.last_name]
  }
  if (passwordHash) changes.password = [null, MASKED]
  if (Object.keys(changes).length === 0) {
    if (ifMatchIsStale('users', user.updated)) throw preconditionFailed()
    return toUser(user)
  }

  const updated = await ctx.db.transaction().execute(async (tx) => {
    const row = await updateNamesAndFirstPassword(tx, user.id, set, passwordHash, now)
    if (row === 'stale') throw preconditionFailed()
    if (!row) throw outsideScope(credential)
    await recordAudit(tx, ctx.clock, selfActor(row), {
      action: passwordHash ? 'user.password_changed' : 'user.updated',
      tenantId: null,
      target: { type: 'user', id: row.id },
      changes,
    })
    return row
  })
  ctx.access.invalidate()
  return toUser(updated)
}
