import type { Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import createClient, { type Client } from 'openapi-fetch'
import type { paths } from '../../../../generated/openapi.js'

/**
 * The console's way to the service: the `/v1` API, typed from the service's own OpenAPI document
 * (generated/openapi.d.ts, `npm run console:types`), sent through `app.inject` with the signed-in person's
 * token. Nothing is called directly: permissions, the role ceiling, audit, Idempotency-Key and If-Match
 * apply exactly as for any other client.
 */
export type ApiClient = Client<paths, JsonMedia>

/**
 * The console reads JSON through this client; exports it reads as streams (apiStream). An operation that
 * also answers another media type (the audit lists' text/csv) is typed by its JSON answer alone.
 */
type JsonMedia = 'application/json'

/** The API refused the signed-in person's token: their session is over (docs/console.md "Sessions"). */
export class TokenRefused extends Error {
  constructor() {
    super('The API refused the session token')
    this.name = 'TokenRefused'
  }
}

/** The second factor the API asks for (the error envelope's `mfa`, docs/api.md#conventions). */
export interface MfaChallenge {
  token: string
  factors: Array<'totp' | 'webauthn' | 'recovery'>
  webauthn?: Record<string, unknown> | undefined
}

/**
 * The API asked the signed-in person to confirm it is them (401 `reauthentication_required`, a sensitive
 * operation needing a recent second factor): not the end of the session but a step-up, which the
 * console asks for on the page and then carries on (docs/console.md "Step-up").
 */
export class StepUpRequired extends Error {
  constructor(readonly challenge: MfaChallenge) {
    super('The API asks for a second factor before this operation')
    this.name = 'StepUpRequired'
  }
}

/** A base the URLs are resolved against; inject never opens a socket, so no host is ever contacted. */
const BASE = 'http://console.invalid'

/**
 * What the console learns from every answer to a signed-in person's call (kit/identity.ts): the method
 * and the status. It may throw — a refused token ends the page there.
 */
export type AnswerWatch = (method: string, status: number) => void

/**
 * The API as the console's caller: `clientAddress` is the browser's address and `userAgent` its
 * User-Agent, so a session the call starts (signing in) is listed as that browser's (docs/security.md).
 */
export function apiClient(
  app: FastifyInstance,
  token: string | undefined,
  clientAddress: string,
  watch?: AnswerWatch,
  userAgent?: string,
): ApiClient {
  return createClient<paths, JsonMedia>({
    baseUrl: BASE,
    fetch: async (request) => {
      const response = await injectFetch(app, request, token, clientAddress, userAgent)
      // A signed-in page's 401 ends the session (the watch), unless it asks for a step-up. The console's
      // own calls outside a page (sign-out, the step-up's answer) have no watch and read every answer.
      if (watch && response.status === 401) {
        const challenge = stepUpChallengeOf(
          await response
            .clone()
            .json()
            .catch(() => undefined),
        )
        if (challenge) throw new StepUpRequired(challenge)
      }
      watch?.(request.method, response.status)
      return response
    },
  })
}

async function injectFetch(
  app: FastifyInstance,
  request: Request,
  token: string | undefined,
  clientAddress: string,
  userAgent: string | undefined,
): Promise<Response> {
  const url = new URL(request.url)
  const headers: Record<string, string> = {}
  request.headers.forEach((value, name) => {
    headers[name] = value
  })
  if (token) headers.authorization = `Bearer ${token}`
  if (userAgent) headers['user-agent'] = userAgent
  const payload = request.body ? Buffer.from(await request.arrayBuffer()) : undefined
  const response = await app.inject({
    method: request.method as 'GET',
    url: url.pathname + url.search,
    headers,
    remoteAddress: clientAddress,
    ...(payload ? { payload } : {}),
  })
  const out = new Headers()
  for (const [name, value] of Object.entries(response.headers)) {
    if (value === undefined) continue
    for (const one of Array.isArray(value) ? value : [value]) out.append(name, String(one))
  }
  const empty = response.statusCode === 204 || response.statusCode === 304
  return new Response(empty ? null : new Uint8Array(response.rawPayload), {
    status: response.statusCode,
    headers: out,
  })
}

/** The error envelope of a refused call (docs/api.md#conventions), as the pages use it. */
export interface ApiError {
  code: number
  reason: string
  message: string
  attribute?: Record<string, string>
  /** With `mfa_required` and `reauthentication_required`: the second factor asked for. */
  mfa?: MfaChallenge
}

/** The challenge of a `reauthentication_required` answer's body; undefined for any other. */
function stepUpChallengeOf(body: unknown): MfaChallenge | undefined {
  const error = (body as { error?: ApiError } | undefined)?.error
  return error?.reason === 'reauthentication_required' && error.mfa ? error.mfa : undefined
}

export function apiErrorOf(body: unknown, status: number): ApiError {
  const error = (body as { error?: ApiError } | undefined)?.error
  return error ?? { code: status, reason: 'unknown', message: `The service answered ${status}` }
}

/** An answer whose body is read as it comes (light-my-request's payloadAsStream): exports of any length. */
export interface ApiStream {
  status: number
  headers: Record<string, string | string[] | number | undefined>
  body: Readable
}

export async function apiStream(
  app: FastifyInstance,
  token: string,
  clientAddress: string,
  url: string,
  watch?: AnswerWatch,
): Promise<ApiStream> {
  const response = await app.inject({
    method: 'GET',
    url,
    headers: { authorization: `Bearer ${token}` },
    remoteAddress: clientAddress,
    payloadAsStream: true,
  })
  try {
    watch?.('GET', response.statusCode)
  } catch (error) {
    response.stream().destroy()
    throw error
  }
  return { status: response.statusCode, headers: response.headers, body: response.stream() }
}
