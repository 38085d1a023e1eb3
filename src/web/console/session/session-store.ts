import { createHash, randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Keys } from '../../../crypto/keys.js'
import { decryptSecret, encryptSecret, type SecretEnvelope } from '../../../crypto/secrets.js'
import type { Database } from '../../../db/schema.js'

/**
 * The console's session table (migration 0014): the only SQL of the console, which holds its own state
 * here and reads everything else through the API. The cookie carries a random id; the row is keyed by the
 * id's SHA-256 and seals the platform token with the secret key, bound to that row.
 */
export interface ConsoleSession {
  idHash: string
  userId: string
  token: string
}

export function hashSessionId(id: string): string {
  return createHash('sha256').update(id).digest('base64url')
}

export class SessionStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly keys: Keys,
  ) {}

  /** A new session for a token; answers the cookie value (the id), which is stored only as a hash. */
  async create(userId: string, token: string, now: Date, expires: Date): Promise<string> {
    const id = randomBytes(32).toString('base64url')
    const idHash = hashSessionId(id)
    const sealed = encryptSecret(this.keys, token, `console-session:${idHash}`)
    await this.db
      .insertInto('console_sessions')
      .values({ id_hash: idHash, user_id: userId, token: JSON.stringify(sealed), created: now, expires })
      .execute()
    // Dead sessions go as new ones come: the table holds live sessions only, give or take.
    await this.db.deleteFrom('console_sessions').where('expires', '<=', now).execute()
    return id
  }

  async find(id: string, now: Date): Promise<ConsoleSession | undefined> {
    const idHash = hashSessionId(id)
    const row = await this.db
      .selectFrom('console_sessions')
      .select(['user_id', 'token'])
      .where('id_hash', '=', idHash)
      .where('expires', '>', now)
      .executeTakeFirst()
    if (!row) return undefined
    const sealed = row.token as unknown as SecretEnvelope
    return {
      idHash,
      userId: row.user_id,
      token: decryptSecret(this.keys, sealed, `console-session:${idHash}`),
    }
  }

  async delete(idHash: string): Promise<void> {
    await this.db.deleteFrom('console_sessions').where('id_hash', '=', idHash).execute()
  }
}
