import { AppError } from '../errors.js'

/**
 * Failures of the database connection itself — the server is down, restarting, refusing connections, or
 * dropped ours — as opposed to failures of a statement. The one place that tells them apart: the error
 * handler answers them 503 database_unavailable (with Retry-After) instead of 500, /readyz reports them,
 * and the outbox worker waits them out quietly.
 */

/** Socket-level codes from Node (connect, DNS, resets). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
])

/**
 * SQLSTATEs that mean "this connection (or the server) is going away or not accepting us yet":
 * class 08 (connection exception), 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now
 * (starting up, shutting down, in recovery), 53300 too_many_connections.
 */
const SERVER_STATES = new Set(['57P01', '57P02', '57P03', '53300'])

/** Messages of `pg` and `pg-pool` for a connection that is gone; they carry no code. */
const CLIENT_MESSAGES = [
  /^Connection terminated/i,
  /^Client has encountered a connection error and is not queryable/i,
  /^Client was closed and is not queryable/i,
  /^timeout exceeded when trying to connect/i,
  /^Connection is closed/i,
  // The embedded engine after it was closed or aborted.
  /^PGlite is closed/i,
]

/** Whether `error` says the database cannot be reached, rather than that a statement failed. */
export function isConnectionFailure(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false
  const { code, message, errors, cause } = error as {
    code?: unknown
    message?: unknown
    errors?: unknown
    cause?: unknown
  }
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || SERVER_STATES.has(code)) return true
    if (/^08[0-9A-Z]{3}$/.test(code)) return true
  }
  if (typeof message === 'string' && CLIENT_MESSAGES.some((pattern) => pattern.test(message))) return true
  // Node reports a refused connection to every address of a host as one AggregateError.
  if (Array.isArray(errors) && errors.some((inner) => isConnectionFailure(inner, depth + 1))) return true
  return cause !== undefined && isConnectionFailure(cause, depth + 1)
}

/** Seconds a client is told to wait before retrying while the database is unreachable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5

export function databaseUnavailable(): AppError {
  return new AppError(
    'database_unavailable',
    'The database is not reachable at the moment; retry shortly',
    undefined,
    { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) },
  )
}

/** The 503 for a connection failure, or undefined when `error` is something else. */
export function connectionError(error: unknown): AppError | undefined {
  return isConnectionFailure(error) ? databaseUnavailable() : undefined
}
