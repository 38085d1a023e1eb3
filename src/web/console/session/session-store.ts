import { createHash, randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Keys } from '../../../crypto/keys.js'
import { decryptSecret, encryptSecret, type SecretEnvelope } from '../../../crypto/secrets.js'
import type { Database } from '../../../db/schema.js'
import type { IdentityStore, Login } from '../kit/identity.js'

/**
 * The console's session table (migration 0014): the only SQL of the console, which holds its own state
 * here and reads everything else through the API. The cookie carries a random id; the row is keyed by the
 * id's SHA-256 and seals the platform token with the secret key, bound to that row. It also keeps the
 * person's identity as the API last answered it (migration 0018, kit/identity.ts).
 */
export interface ConsoleSession {
  idHash: string
  userId: string
  token: string
  login?: Login | undefined
  loginRead?: Date | undefined
}

export function hashSessionId(id: string): string {
  return createHash('sha256').update(id).digest('base64url')
}

export class SessionStore implements IdentityStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly keys: Keys,
  ) {}

  /**
   * A new session for a token and the identity read with it; answers the cookie value (the id), which is
   * stored only as a hash.
   */
  async create(login: Login, token: string, now: Date, expires: Date): Promise<string> {
    const id = randomBytes(32).toString('base64url')
    const idHash = hashSessionId(id)
    const sealed = encryptSecret(this.keys, token, `console-session:${idHash}`)
    await this.db
      .insertInto('console_sessions')
      .values({
        id_hash: idHash,
        user_id: login.userId,
        token: JSON.stringify(sealed),
        created: now,
        expires,
        login: JSON.stringify(login),
        login_read: now,
      })
      .execute()
    // Dead sessions go as new ones come: the table holds live sessions only, give or take.
    await this.db.deleteFrom('console_sessions').where('expires', '<=', now).execute()
    return id
  }

  async find(id: string, now: Date): Promise<ConsoleSession | undefined> {
    const idHash = hashSessionId(id)
    const row = await this.db
      .selectFrom('console_sessions')
      .select(['user_id', 'token', 'login', 'login_read'])
      .where('id_hash', '=', idHash)
      .where('expires', '>', now)
      .executeTakeFirst()
    if (!row) return undefined
    const sealed = row.token as unknown as SecretEnvelope
    return {
      idHash,
      userId: row.user_id,
      token: decryptSecret(this.keys, sealed, `console-session:${idHash}`),
      // Written by keepLogin from the API's own answer, read back as that answer.
      login: (row.login ?? undefined) as Login | undefined,
      loginRead: row.login_read ?? undefined,
    }
  }

  /**
   * The session's token replaced by a fresh one of the same API session (a step-up, kit/step-up.ts): the
   * row, its cookie and its expiry stay.
   */
  async replaceToken(idHash: string, token: string): Promise<void> {
    const sealed = encryptSecret(this.keys, token, `console-session:${idHash}`)
    await this.db
      .updateTable('console_sessions')
      .set({ token: JSON.stringify(sealed) })
      .where('id_hash', '=', idHash)
      .execute()
  }

  async keepLogin(idHash: string, login: Login, now: Date): Promise<void> {
    await this.db
      .updateTable('console_sessions')
      .set({ login: JSON.stringify(login), login_read: now })
      .where('id_hash', '=', idHash)
      .execute()
  }

  async forgetLogin(idHash: string): Promise<void> {
    await this.db
      .updateTable('console_sessions')
      .set({ login: null, login_read: null })
      .where('id_hash', '=', idHash)
      .execute()
  }

  async delete(idHash: string): Promise<void> {
    await this.db.deleteFrom('console_sessions').where('id_hash', '=', idHash).execute()
  }
}
