/** Typed, frozen configuration read once from the environment (docs/operations.md#configuration). */
export interface Config {
  port: number
  host: string
  dataDir: string
  /** undefined → embedded database in dataDir. */
  databaseUrl: string | undefined
  publicUrl: string
  smtpUrl: string | undefined
  mailFrom: string
  /** 32 bytes, or undefined when it must be generated (embedded) — see crypto/keys.ts. */
  secretKey: Buffer | undefined
  tokenSecret: string | undefined
  adminEmail: string
  adminPassword: string | undefined
  invitationTtlSeconds: number
  /** How long a password-reset link works (docs/api.md#passwords-and-the-existing-clients-flows). */
  passwordResetTtlSeconds: number
  /**
   * Link templates of the e-mails (docs/api.md#passwords-and-the-existing-clients-flows); placeholders `{token}`, `{userId}` (and `{tenantId}` for
   * invitations), URL-encoded. Undefined: the service's own pages under `publicUrl`.
   */
  invitationUrl: string | undefined
  passwordResetUrl: string | undefined
  logLevel: LogLevel
  /** Run the outbox worker inside the server process (default) or leave it to `tenantry worker`. */
  inProcessWorker: boolean
  /** Authenticated requests per minute per credential; 0 turns the limit off (the default). */
  apiRateLimitPerMinute: number
  /** auth-info look-ups per e-mail address looked up, per 15 minutes; 0 turns the limit off. */
  authInfoLimitPerEmail: number
  /** auth-info look-ups per client address, per 15 minutes; 0 turns the limit off. */
  authInfoLimitPerAddress: number
  /** Passkey sign-in options per client address, per 15 minutes (each writes a challenge); 0: off. */
  passkeyOptionsLimitPerAddress: number
  /** Send statements to a server database as named prepared statements (db/prepared-pool.ts). */
  preparedStatements: boolean
  /** LOG_FORMAT: json, pretty, or undefined (auto: pretty when standard output is a terminal). */
  logFormat: 'json' | 'pretty' | undefined
  /** TENANTRY_CORS_ORIGINS: origins whose browser front ends may call the API; empty by default. */
  corsOrigins: string[]
  /** OTEL_EXPORTER_OTLP_ENDPOINT: where spans go; tracing is off when unset. */
  otlpEndpoint: string | undefined
  /** Outbound rule (docs/webhooks.md#the-outbound-rule, src/http/outbound.ts): also allow plain http:// addresses. */
  outboundAllowHttp: boolean
  /** Outbound rule: also allow loopback, private, link-local, CGNAT and metadata addresses. */
  outboundAllowPrivate: boolean
  /** Days audit events (and webhook delivery attempts) are kept; the worker deletes older ones. */
  auditRetentionDays: number
  /** Where a single sign-on hands the platform token over (`#token=…`); default: the service's own page. */
  ssoReturnUrl: string
  /** TENANTRY_CONSOLE: serve the console at /console (on by default; docs/console.md). */
  console: boolean
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

type Env = Record<string, string | undefined>

/** Reads every setting, collects every problem, and throws them all at once. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = []
  const read = (name: string) => {
    const value = env[name]
    return value === undefined || value.trim() === '' ? undefined : value.trim()
  }
  const integer = (name: string, fallback: number, min: number, max: number) => {
    const raw = read(name)
    if (raw === undefined) return fallback
    const value = Number(raw)
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`)
      return fallback
    }
    return value
  }

  const port = integer('PORT', 8080, 0, 65535)
  const host = read('HOST') ?? '0.0.0.0'
  const dataDir = read('TENANTRY_DATA_DIR') ?? './data'

  const databaseUrl = read('DATABASE_URL')
  if (databaseUrl !== undefined && !isSupportedDatabaseUrl(databaseUrl)) {
    problems.push('DATABASE_URL must be memory:// or a postgres:// URL (unset: the embedded database)')
  }

  const publicUrl = (read('TENANTRY_PUBLIC_URL') ?? `http://localhost:${port}`).replace(/\/+$/, '')
  if (!isHttpUrl(publicUrl)) problems.push('TENANTRY_PUBLIC_URL must be an http(s) URL')

  const smtpUrl = read('TENANTRY_SMTP_URL')
  if (smtpUrl !== undefined && !/^smtps?:\/\//.test(smtpUrl)) {
    problems.push('TENANTRY_SMTP_URL must be an smtp:// or smtps:// URL')
  }
  const mailFrom = read('TENANTRY_MAIL_FROM') ?? 'Tenantry <no-reply@tenantry.local>'

  let secretKey: Buffer | undefined
  const rawKey = read('TENANTRY_SECRET_KEY')
  if (rawKey !== undefined) {
    secretKey = Buffer.from(rawKey, 'base64')
    if (secretKey.length !== 32) {
      problems.push('TENANTRY_SECRET_KEY must be 32 bytes, base64-encoded (try: openssl rand -base64 32)')
    }
  } else if (databaseUrl !== undefined && databaseUrl !== 'memory://') {
    problems.push(
      'TENANTRY_SECRET_KEY is required with a server database (every process must share it); ' +
        'generate one with: openssl rand -base64 32',
    )
  }

  const tokenSecret = read('TENANTRY_TOKEN_SECRET')
  if (tokenSecret !== undefined && tokenSecret.length < 32) {
    problems.push('TENANTRY_TOKEN_SECRET must be at least 32 characters')
  }

  const adminEmail = (read('TENANTRY_ADMIN_EMAIL') ?? 'admin@tenantry.local').toLowerCase()
  if (!/^[^\s@]+@[^\s@]+$/.test(adminEmail)) problems.push('TENANTRY_ADMIN_EMAIL must be an e-mail address')
  const adminPassword = read('TENANTRY_ADMIN_PASSWORD')
  if (adminPassword !== undefined && adminPassword.length < 8) {
    problems.push('TENANTRY_ADMIN_PASSWORD must be at least 8 characters')
  }

  const invitationTtlSeconds = integer('TENANTRY_INVITATION_TTL', 86_400, 60, 30 * 86_400)

  const passwordResetTtlSeconds = integer('TENANTRY_PASSWORD_RESET_TTL', 3_600, 60, 7 * 86_400)
  const invitationUrl = read('TENANTRY_INVITATION_URL')
  if (invitationUrl !== undefined && !isLinkTemplate(invitationUrl)) {
    problems.push('TENANTRY_INVITATION_URL must be an http(s) URL template containing {token}')
  }
  const passwordResetUrl = read('TENANTRY_PASSWORD_RESET_URL')
  if (passwordResetUrl !== undefined && !isLinkTemplate(passwordResetUrl)) {
    problems.push('TENANTRY_PASSWORD_RESET_URL must be an http(s) URL template containing {token}')
  }

  const rawLevel = read('LOG_LEVEL') ?? 'info'
  const logLevel = (LOG_LEVELS as readonly string[]).includes(rawLevel) ? (rawLevel as LogLevel) : 'info'
  if (logLevel !== rawLevel) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`)

  const rawWorker = read('TENANTRY_WORKER') ?? 'in-process'
  if (rawWorker !== 'in-process' && rawWorker !== 'off') {
    problems.push('TENANTRY_WORKER must be in-process or off')
  }
  const apiRateLimitPerMinute = integer('TENANTRY_API_RATE_LIMIT', 0, 0, 1_000_000)
  const authInfoLimitPerEmail = integer('TENANTRY_AUTH_INFO_LIMIT_PER_EMAIL', 30, 0, 1_000_000)
  const authInfoLimitPerAddress = integer('TENANTRY_AUTH_INFO_LIMIT_PER_ADDRESS', 1_000, 0, 1_000_000)
  const passkeyOptionsLimitPerAddress = integer(
    'TENANTRY_PASSKEY_OPTIONS_LIMIT_PER_ADDRESS',
    1_000,
    0,
    1_000_000,
  )
  const rawPrepared = read('TENANTRY_PREPARED_STATEMENTS') ?? 'on'
  if (rawPrepared !== 'on' && rawPrepared !== 'off') {
    problems.push('TENANTRY_PREPARED_STATEMENTS must be on or off')
  }

  const rawFormat = read('LOG_FORMAT')
  if (rawFormat !== undefined && rawFormat !== 'json' && rawFormat !== 'pretty') {
    problems.push('LOG_FORMAT must be json or pretty (unset: pretty at a terminal, JSON otherwise)')
  }
  const corsOrigins = (read('TENANTRY_CORS_ORIGINS') ?? '')
    .split(',')
    .map((origin) => origin.trim().replace(/\/+$/, ''))
    .filter((origin) => origin !== '')
  for (const origin of corsOrigins) {
    if (!isHttpUrl(origin) || new URL(origin).origin !== origin) {
      problems.push(`TENANTRY_CORS_ORIGINS must list origins like https://app.example.com (got "${origin}")`)
    }
  }
  const otlpEndpoint = read('OTEL_EXPORTER_OTLP_ENDPOINT')?.replace(/\/+$/, '')
  if (otlpEndpoint !== undefined && !isHttpUrl(otlpEndpoint)) {
    problems.push('OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL')
  }
  const flag = (name: string) => {
    const raw = read(name)
    if (raw === undefined || raw === 'false') return false
    if (raw === 'true') return true
    problems.push(`${name} must be true or false`)
    return false
  }
  const outboundAllowHttp = flag('TENANTRY_OUTBOUND_ALLOW_HTTP')
  const outboundAllowPrivate = flag('TENANTRY_OUTBOUND_ALLOW_PRIVATE')

  const auditRetentionDays = integer('TENANTRY_AUDIT_RETENTION_DAYS', 365, 1, 36_500)
  const rawConsole = read('TENANTRY_CONSOLE') ?? 'on'
  if (rawConsole !== 'on' && rawConsole !== 'off') problems.push('TENANTRY_CONSOLE must be on or off')

  const ssoReturnUrl = read('TENANTRY_SSO_RETURN_URL') ?? `${publicUrl}/sso/complete`
  if (!isHttpUrl(ssoReturnUrl) || ssoReturnUrl.includes('#'))
    problems.push('TENANTRY_SSO_RETURN_URL must be an http(s) URL without a #fragment')

  if (problems.length > 0) throw new ConfigError(problems)
  return Object.freeze({
    port,
    host,
    dataDir,
    databaseUrl,
    publicUrl,
    smtpUrl,
    mailFrom,
    secretKey,
    tokenSecret,
    adminEmail,
    adminPassword,
    invitationTtlSeconds,
    passwordResetTtlSeconds,
    invitationUrl,
    passwordResetUrl,
    logLevel,
    inProcessWorker: rawWorker === 'in-process',
    apiRateLimitPerMinute,
    authInfoLimitPerEmail,
    authInfoLimitPerAddress,
    passkeyOptionsLimitPerAddress,
    preparedStatements: rawPrepared !== 'off',
    logFormat: rawFormat as Config['logFormat'],
    corsOrigins,
    otlpEndpoint,
    outboundAllowHttp,
    outboundAllowPrivate,
    auditRetentionDays,
    ssoReturnUrl,
    console: rawConsole !== 'off',
  })
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}

/** A link template: an http(s) URL once its placeholders are filled, and one that carries the token. */
function isLinkTemplate(value: string): boolean {
  return value.includes('{token}') && isHttpUrl(value.replace(/\{(token|userId|tenantId)\}/g, 'x'))
}

/** The database URLs the service can open (db/database.ts): a throw-away embedded one, or a server. */
function isSupportedDatabaseUrl(url: string): boolean {
  return url === 'memory://' || url.startsWith('postgres://') || url.startsWith('postgresql://')
}
