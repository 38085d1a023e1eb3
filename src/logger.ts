import pino, { type Logger } from 'pino'
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

export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
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
    destination,
  )
}
