import type { paths } from '../../../../generated/openapi.js'
import { type ApiClient, TokenRefused } from '../api/client.js'

/** The signed-in person as the API says it (`POST /v1/login`): names, platform role, memberships. */
export type Login = paths['/v1/login']['post']['responses'][200]['content']['application/json']['result']

/** How long a person's identity, once read, is drawn without asking the API again. */
export const IDENTITY_MAX_AGE_MS = 60_000

/** Where a session keeps the identity last read (session/session-store.ts, the session's row). */
export interface IdentityStore {
  keepLogin(idHash: string, login: Login, now: Date): Promise<void>
  forgetLogin(idHash: string): Promise<void>
}

/** A session as far as its identity goes: the identity kept, and when it was read. */
export interface SessionIdentity {
  idHash: string
  login?: Login | undefined
  loginRead?: Date | undefined
}

/**
 * The signed-in person's identity for one request (docs/console.md "Sessions"): read from the API once
 * per session and again when it can have changed — after IDENTITY_MAX_AGE_MS, after the console changed
 * anything through the API (a write may be the person's own role, membership or name), or when the API
 * refused the person something (403: their permissions may be fewer than the page thought). What it
 * decides is only which controls a page draws; the API decides every call. A token the API refuses
 * (401: expired, the person disabled, their password changed) ends the page at that call, whichever it is.
 */
export class RequestIdentity {
  #stale = false

  constructor(
    private readonly store: IdentityStore,
    private readonly session: SessionIdentity,
    private readonly now: Date,
  ) {}

  /** Watches every answer of the person's API client (api/client.ts AnswerWatch). */
  readonly watch = (method: string, status: number): void => {
    if (status === 401) throw new TokenRefused()
    if (status === 403 || (method !== 'GET' && status < 400)) this.#stale = true
  }

  /** The person: as kept, while it is fresh; else read now and kept. */
  async read(api: ApiClient): Promise<Login> {
    const { login, loginRead } = this.session
    if (login && loginRead && this.now.getTime() - loginRead.getTime() < IDENTITY_MAX_AGE_MS) return login
    const { data, response } = await api.POST('/v1/login')
    if (!data) throw new Error(`POST /v1/login answered ${response.status}`)
    // The login is a POST the watch counts as a write: reading the identity changes nothing.
    this.#stale = false
    await this.store.keepLogin(this.session.idHash, data.result, this.now)
    return data.result
  }

  /** Before the answer goes out: an identity that can have changed is forgotten, read again next page. */
  async settle(): Promise<void> {
    if (!this.#stale) return
    this.#stale = false
    await this.store.forgetLogin(this.session.idHash)
  }
}
