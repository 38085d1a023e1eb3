import { trace } from '@opentelemetry/api'
import pino, { type Logger } from 'pino'
import pretty from 'pino-pretty'
import type { LogLevel } from './config.js'

/**
 * pino JSON logs. Credentials never reach a line: the request serializer logs no headers, one-time
 * tokens are cut out of URLs, and the usual secret-bearing keys are redacted wherever they appear.
 */
const REDACT = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'password',
  'currentPassword',
  'secret',
  'token',
  '*.password',
  '*.currentPassword',
  '*.secret',
  '*.token',
  '*.consumerSecret',
  '*.securityToken',
]

export function redactUrl(url: string): string {
  return url
    .replace(/(\/invitations\/)[^/?#]+/g, '$1[redacted]')
    .replace(/([?&]token=)[^&#]*/g, '$1[redacted]')
}

export interface LoggerOptions {
  /** Human-readable lines (pino-pretty) instead of JSON; ignored when a destination is given. */
  pretty?: boolean
  /** Add the active span's trace id (`traceId`) to every line: on when tracing is configured. */
  traceIds?: boolean
}

/** JSON at a log shipper, pretty at a terminal: LOG_FORMAT, else whether standard output is a TTY. */
export function wantsPrettyLogs(format: 'json' | 'pretty' | undefined, isTty: boolean): boolean {
  return format === undefined ? isTty : format === 'pretty'
}

export function createLogger(
  level: LogLevel,
  destination?: pino.DestinationStream,
  options: LoggerOptions = {},
): Logger {
  const target =
    destination ??
    (options.pretty
      ? pretty({
          colorize: process.stdout.isTTY === true,
          translateTime: 'SYS:HH:MM:ss.l',
          ignore: 'pid,hostname',
        })
      : undefined)
  return pino(
    {
      level,
      ...(options.traceIds ? { mixin: traceIdOfActiveSpan } : {}),
      redact: { paths: REDACT, censor: '[redacted]' },
      serializers: {
        req: (req: { method: string; url: string; ip?: string }) => ({
          method: req.method,
          url: redactUrl(req.url),
          remoteAddress: req.ip,
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        err: pino.stdSerializers.err,
      },
    },
    target,
  )
}

/**
 * A child of `logger` for hot lines whose fields are fixed by the code that writes them and include no
 * credential-bearing key (the request line, a mail's delivery): redaction could find nothing in them,
 * yet pino's redaction walks all of REDACT, wildcards included, on every line (its cost:
 * docs/performance.md). Make it once, not per line.
 */
export function fixedShapeLines<L extends { child(bindings: object, options: { redact: string[] }): L }>(
  logger: L,
): L {
  return logger.child({}, { redact: [] })
}

function traceIdOfActiveSpan(): { traceId?: string } {
  const span = trace.getActiveSpan()
  return span ? { traceId: span.spanContext().traceId } : {}
}
