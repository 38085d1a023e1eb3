/**
 * The integration types and the keys of their `properties` (docs/product.md#integrations, docs/api.md#integrations), declared once: the
 * request checks, the defaults, which keys are secrets and the OpenAPI description all come from here.
 */
export const INTEGRATION_TYPES = [
  'salesforce',
  'zendesk',
  'rest',
  'calabrio',
  'verint',
  'teleopti',
  'monet',
  'email',
  'twilio',
  'serenova-voice',
  'lambda',
  'client',
] as const
export type IntegrationType = (typeof INTEGRATION_TYPES)[number]

/** What reads answer in place of a stored secret; sent back on update it keeps the stored value. */
export const SECRET_MASK = '********'

/** Property strings are credentials, ids and addresses: generous, but bounded. */
export const PROPERTY_MAX_LENGTH = 2048

export type UrlRule = { protocols: readonly string[] }

/**
 * One key of a type. `required` keys may be empty while the integration is inactive; turning it active
 * needs them (docs/api.md#integrations, "incomplete while inactive"). A URL, when given, must have the right scheme.
 */
export type PropertySpec = (
  | { kind: 'text' }
  | { kind: 'secret' }
  | { kind: 'url'; url: UrlRule }
  | { kind: 'flag' }
  | { kind: 'port' }
  | { kind: 'choice'; choices: readonly string[] }
  | { kind: 'object' }
) & { required?: boolean }

const text: PropertySpec = { kind: 'text' }
const secret: PropertySpec = { kind: 'secret' }
const flag: PropertySpec = { kind: 'flag' }
const port: PropertySpec = { kind: 'port' }
const url = (protocols: readonly string[]): PropertySpec => ({ kind: 'url', url: { protocols } })
const required = (spec: PropertySpec): PropertySpec => ({ ...spec, required: true })

export const PROPERTY_SPECS: Record<IntegrationType, Record<string, PropertySpec>> = {
  salesforce: {
    consumerKey: text,
    consumerSecret: secret,
    password: secret,
    securityToken: secret,
    username: text,
    loginUrl: url(['https:']),
    pushEnabled: flag,
  },
  zendesk: {
    // A ticketing integration without an https endpoint cannot work: required to be active.
    endpointPrefix: required(url(['https:'])),
    interactionFieldId: text,
    password: secret,
    username: text,
    workItems: required(flag),
  },
  rest: {
    endpointPrefix: url(['http:', 'https:']),
    password: secret,
    token: secret,
    username: text,
  },
  calabrio: {
    username: required(text),
    password: required(secret),
    ctiEnabled: flag,
    ctiEndpoint: url(['http:', 'https:']),
    rtaEnabled: flag,
    rtaUrl: url(['http:', 'https:']),
  },
  verint: {
    sftpHost: required(text),
    sftpPort: port,
    sftpUsername: required(text),
    sftpPassword: required(secret),
    orgName: text,
    multipleTenants: flag,
    dataSourceName: text,
    scorecardsEnabled: flag,
    historicalEnabled: flag,
  },
  teleopti: {
    protocol: text,
    ftpUrl: required(text),
    ftpUsername: required(text),
    ftpPassword: required(secret),
    authKey: secret,
    teleoptiUrl: url(['http:', 'https:']),
    platformTypeId: text,
    sourceId: text,
    multipleTenants: flag,
  },
  monet: {
    monetUrl: required(url(['http:', 'https:'])),
    username: required(text),
    password: required(secret),
    usernameAsAgentId: flag,
  },
  email: {
    incomingType: text,
    imapServer: text,
    smtpHost: required(text),
    smtpPort: port,
    smtpEncryptionType: { kind: 'choice', choices: ['ssl/tls', 'starttls'] },
    smtpUser: text,
    smtpPassword: secret,
  },
  twilio: {
    accountSid: required(text),
    authToken: required(secret),
    region: text,
    forceRegion: flag,
    webRtc: flag,
    extensionPrefix: text,
    globalDialParams: { kind: 'object' },
  },
  'serenova-voice': {
    // One of accountSid or accountId (rule below).
    accountSid: text,
    accountId: text,
    apiKey: required(secret),
  },
  lambda: { accessKey: required(text), secretKey: required(secret) },
  client: { accessKey: required(text), secretKey: required(secret) },
}

/** An object property (twilio's globalDialParams): a flat map of scalars. */
export type DialParams = Record<string, string | number | boolean>
export const OBJECT_MAX_KEYS = 50

/** Plain property values: strings, booleans for flags, a flat object for object keys. */
export type PlainValue = string | boolean | DialParams
export type PlainProperties = Record<string, PlainValue>

export function isIntegrationType(value: unknown): value is IntegrationType {
  return typeof value === 'string' && (INTEGRATION_TYPES as readonly string[]).includes(value)
}

/**
 * The types a client may send, in any mix of case (`Zendesk`, `REST`), and nothing else: the schemas
 * publish and validate it as the pattern of `type`, and normalizeType matches with it, so the document
 * says exactly what the service takes (docs/api.md, Integrations). ASCII letters only: a look-alike such
 * as the Kelvin sign, which toLowerCase() would turn into `k`, is not a type.
 */
export const INTEGRATION_TYPE_PATTERN = `^(?:${INTEGRATION_TYPES.map(inAnyCase).join('|')})$`
const SENT_TYPE = new RegExp(INTEGRATION_TYPE_PATTERN, 'u')

function inAnyCase(name: string): string {
  return [...name]
    .map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('')
}

/** The stored (lower-case) type of what a client sent: `type` is matched case-insensitively. */
export function normalizeType(value: unknown): IntegrationType | undefined {
  return typeof value === 'string' && SENT_TYPE.test(value)
    ? (value.toLowerCase() as IntegrationType)
    : undefined
}

export function isObjectKey(type: IntegrationType, key: string): boolean {
  return Object.hasOwn(PROPERTY_SPECS[type], key) && PROPERTY_SPECS[type][key]?.kind === 'object'
}

export function isSecretKey(type: IntegrationType, key: string): boolean {
  return Object.hasOwn(PROPERTY_SPECS[type], key) && PROPERTY_SPECS[type][key]?.kind === 'secret'
}

/** For the OpenAPI document: the keys of each type. */
export function describePropertyKeys(): string {
  return INTEGRATION_TYPES.map((type) => {
    const keys = Object.entries(PROPERTY_SPECS[type]).map(([key, spec]) => {
      const notes: string[] = []
      if (spec.kind === 'secret') notes.push('secret')
      if (spec.kind === 'flag') notes.push('boolean')
      if (spec.kind === 'port') notes.push('port')
      if (spec.kind === 'object') notes.push('object')
      if (spec.kind === 'choice') notes.push(spec.choices.join('|'))
      if (spec.kind === 'url') notes.push(`${spec.url.protocols.map((p) => p.slice(0, -1)).join('/')} URL`)
      if (spec.required) notes.push('required to be active')
      return notes.length > 0 ? `${key} (${notes.join(', ')})` : key
    })
    return `${type}: ${keys.join(', ')}`
  }).join('; ')
}
