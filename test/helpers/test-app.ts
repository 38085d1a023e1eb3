import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll } from 'vitest'
import { buildApp } from '../../src/app.js'
import { ManualClock } from '../../src/clock.js'
import { type Config, loadConfig } from '../../src/config.js'
import type { ServiceContext } from '../../src/context.js'
import { resolveKeys } from '../../src/crypto/keys.js'
import { createLogger } from '../../src/logger.js'
import { watchBodiesAgainstDocument } from './document-conformance.js'
import { createTestDatabase, type TestDatabase } from './test-database.js'
import { TEST_ADMIN, TEST_SECRET_KEY, TEST_TOKEN_SECRET } from './test-env.js'

/**
 * A test clock that moves with the wall clock, plus whatever a test adds. For tests that need real
 * passage of time between steps (a password change must postdate the tokens issued before it).
 */
export class FollowingClock extends ManualClock {
  #offset = 0
  override now(): Date {
    return new Date(Date.now() + this.#offset)
  }
  override advance(ms: number): void {
    this.#offset += ms
  }
  override set(at: Date): void {
    this.#offset = at.getTime() - Date.now()
  }
}

export interface ApiResponse<T = any> {
  status: number
  body: T
  headers: Record<string, string | string[] | number | undefined>
}

export interface RequestOptions {
  token?: string
  /** Raw Authorization header, when not a token. */
  authorization?: string
  body?: unknown
  headers?: Record<string, string>
}

export interface TestApp {
  app: FastifyInstance
  ctx: ServiceContext
  clock: ManualClock
  config: Config
  database: TestDatabase
  /** Every log line the app wrote, as text. */
  logs: string[]
  request<T = any>(method: string, url: string, options?: RequestOptions): Promise<ApiResponse<T>>
  /** A token for the bootstrapped Platform Administrator. */
  adminToken(): Promise<string>
  tokenFor(username: string, password: string): Promise<string>
  close(): Promise<void>
}

export interface TestAppOptions {
  /** Extra environment for loadConfig (variables of docs/operations.md#configuration). */
  env?: Record<string, string>
  clock?: ManualClock
  database?: TestDatabase
}

/** The app as production builds it (same factory), on a database of its own, over app.inject. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase())
  const config = loadConfig({
    DATABASE_URL: database.url,
    TENANTRY_SECRET_KEY: TEST_SECRET_KEY.toString('base64'),
    TENANTRY_TOKEN_SECRET: TEST_TOKEN_SECRET,
    TENANTRY_ADMIN_EMAIL: TEST_ADMIN.email,
    TENANTRY_ADMIN_PASSWORD: TEST_ADMIN.password,
    TENANTRY_PUBLIC_URL: 'http://tenantry.test',
    LOG_LEVEL: 'info',
    ...options.env,
  })
  const clock = options.clock ?? new ManualClock()
  const logs: string[] = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(chunk.toString())
      done()
    },
  })
  const logger = createLogger(config.logLevel, sink)
  const platform = await database.handle.db
    .selectFrom('platform')
    .select(['id', 'name'])
    .executeTakeFirstOrThrow()
  const { app, ctx } = await buildApp({
    db: database.handle.db,
    config,
    clock,
    keys: resolveKeys(config),
    logger,
    platform,
  })
  // Every JSON body a test sends is held to the published document (document-conformance.ts).
  const documentViolations = watchBodiesAgainstDocument(app)
  await app.ready()

  const request = async <T>(
    method: string,
    url: string,
    opts: RequestOptions = {},
  ): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...opts.headers }
    if (opts.token) headers.authorization = `Bearer ${opts.token}`
    if (opts.authorization) headers.authorization = opts.authorization
    const hasBody = opts.body !== undefined
    if (hasBody && !headers['content-type']) headers['content-type'] = 'application/json'
    const response = await app.inject({
      method: method as 'GET',
      url,
      headers,
      ...(hasBody ? { payload: typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body) } : {}),
    })
    let body: unknown = response.body
    if ((response.headers['content-type'] ?? '').toString().includes('json') && response.body) {
      body = JSON.parse(response.body)
    }
    return { status: response.statusCode, body: body as T, headers: response.headers }
  }

  const tokenFor = async (username: string, password: string) => {
    const response = await request<{ token: string }>('POST', '/v1/tokens', { body: { username, password } })
    if (response.status !== 200)
      throw new Error(`login as ${username} failed: ${JSON.stringify(response.body)}`)
    return response.body.token
  }
  let adminToken: string | undefined

  return {
    app,
    ctx,
    clock,
    config,
    database,
    logs,
    request,
    tokenFor,
    adminToken: async () => {
      adminToken ??= await tokenFor(TEST_ADMIN.email, TEST_ADMIN.password)
      return adminToken
    },
    close: async () => {
      await app.close()
      if (!options.database) await database.drop()
      if (documentViolations.length > 0) {
        throw new Error(`The OpenAPI document disagrees with the service:\n${documentViolations.join('\n')}`)
      }
    },
  }
}

/**
 * The app preamble of a test file in one line: the app is created before the file's tests and closed
 * after them. What it returns stands for that app (it forwards to it), so tests write `t.request(…)`
 * as before. Options may be computed in the hook — e.g. from an SMTP server the file starts first:
 * `useTestApp(async () => ({ env: { TENANTRY_SMTP_URL: (smtp = await startSmtpServer()).url } }))`.
 * A file's own `afterAll` runs before the app closes (vitest runs after-hooks in reverse), and may close
 * it itself.
 */
export function useTestApp(
  options: TestAppOptions | (() => TestAppOptions | Promise<TestAppOptions>) = {},
): TestApp {
  let current: TestApp | undefined
  const the = (): TestApp => {
    if (!current) throw new Error('the test app exists from beforeAll to afterAll (useTestApp)')
    return current
  }
  beforeAll(async () => {
    current = await createTestApp(typeof options === 'function' ? await options() : options)
  })
  afterAll(async () => {
    await current?.close()
    current = undefined
  })
  return {
    get app() {
      return the().app
    },
    get ctx() {
      return the().ctx
    },
    get clock() {
      return the().clock
    },
    get config() {
      return the().config
    },
    get database() {
      return the().database
    },
    get logs() {
      return the().logs
    },
    request: (method, url, requestOptions) => the().request(method, url, requestOptions),
    adminToken: () => the().adminToken(),
    tokenFor: (username, password) => the().tokenFor(username, password),
    // A file may close the app itself (closeAfterBulk does, to wait for the pool's goodbyes); the
    // after-hook then finds nothing left to close.
    close: async () => {
      const app = the()
      current = undefined
      await app.close()
    },
  }
}
