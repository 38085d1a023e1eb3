import type { Kysely } from 'kysely'
import { uuidv7 } from 'uuidv7'
import type { AuthMethod, Database } from '../../src/db/schema.js'
import type { TestApp } from './test-app.js'

/**
 * Second factors arranged for the policy's tests (docs/security.md, "Policy"): a person given an active
 * authenticator app as a row, and a token of a sign-in won with a second factor, started the one way a
 * session starts (SessionTokens.start) — what `POST /v1/tokens/mfa` hands out after a TOTP code.
 */

/** An active TOTP factor for the person (its key is never used: the policy only asks whether one exists). */
export async function giveFactor(db: Kysely<Database>, userId: string): Promise<void> {
  await db
    .insertInto('user_factors')
    .values({
      id: uuidv7(),
      user_id: userId,
      type: 'totp',
      name: 'Test authenticator',
      status: 'active',
      created: new Date(),
      totp_secret: JSON.stringify({ test: true }),
    })
    .execute()
}

/** A token of a new session won with `methods` (a password and a TOTP code by default). */
export async function tokenWonWith(
  t: TestApp,
  userId: string,
  methods: readonly AuthMethod[] = ['pwd', 'otp'],
): Promise<string> {
  const started = await t.app.authenticator.sessions.start(
    { userId, authMethods: methods, client: { ip: null, userAgent: 'policy test' } },
    86_400,
  )
  if (!started) throw new Error('the session was refused')
  return started.token
}
