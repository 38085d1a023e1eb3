/**
 * The attributes this endpoint stores, defined once (docs/scim.md). The same definitions validate and
 * store what a directory sends (scim-values.ts), resolve PATCH paths (scim-patch.ts) and are published
 * by /Schemas (scim-discovery.ts): what is advertised is exactly what is stored.
 */

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User'
export const ENTERPRISE_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group'
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse'
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp'
export const SEARCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest'

export type AttributeType = 'string' | 'boolean' | 'complex' | 'reference'
export type Mutability = 'readOnly' | 'readWrite' | 'immutable'

export interface AttributeDef {
  name: string
  type: AttributeType
  multiValued: boolean
  required: boolean
  caseExact: boolean
  mutability: Mutability
  returned: 'always' | 'default'
  uniqueness: 'none' | 'server'
  description: string
  subAttributes?: AttributeDef[]
  canonicalValues?: string[]
  referenceTypes?: string[]
}

const attr = (name: string, description: string, more: Partial<AttributeDef> = {}): AttributeDef => ({
  name,
  type: 'string',
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  description,
  ...more,
})

const typeAttr = (values: string[]) =>
  attr('type', 'A label for the value’s function', { canonicalValues: values })
const primaryAttr = attr('primary', 'Whether this is the primary value', { type: 'boolean' })

const multiComplex = (name: string, description: string, subAttributes: AttributeDef[], more = {}) =>
  attr(name, description, { type: 'complex', multiValued: true, subAttributes, ...more })

export const USER_ATTRIBUTES: AttributeDef[] = [
  attr('userName', 'Unique identifier of the user in this tenant (case-insensitive)', {
    required: true,
    uniqueness: 'server',
    returned: 'always',
  }),
  attr('name', 'The components of the user’s name', {
    type: 'complex',
    subAttributes: [
      attr('formatted', 'The full name, formatted for display'),
      attr('familyName', 'The family name (last name)'),
      attr('givenName', 'The given name (first name)'),
      attr('middleName', 'The middle name(s)'),
      attr('honorificPrefix', 'The honorific prefix, e.g. "Ms."'),
      attr('honorificSuffix', 'The honorific suffix, e.g. "III"'),
    ],
  }),
  attr('displayName', 'The name shown for the user'),
  attr('nickName', 'The casual name of the user'),
  attr('title', 'The user’s title, e.g. "Vice President"'),
  attr('userType', 'The relationship between the organisation and the user'),
  attr('preferredLanguage', 'The preferred language, e.g. "en-US"'),
  attr('locale', 'The default location, e.g. "en-US"'),
  attr('timezone', 'The time zone, an IANA name'),
  attr('active', 'Whether the membership is enabled (false: disabled)', { type: 'boolean' }),
  multiComplex(
    'emails',
    'E-mail addresses; the primary (else "work", else the first) is the platform user’s e-mail',
    [
      attr('value', 'The e-mail address', { required: true }),
      typeAttr(['work', 'home', 'other']),
      primaryAttr,
    ],
    { required: true },
  ),
  multiComplex('phoneNumbers', 'Telephone numbers', [
    attr('value', 'The telephone number'),
    typeAttr(['work', 'home', 'mobile', 'fax', 'pager', 'other']),
    primaryAttr,
  ]),
  multiComplex('addresses', 'Physical mailing addresses', [
    attr('formatted', 'The full address, formatted for display'),
    attr('streetAddress', 'The street address'),
    attr('locality', 'The city or locality'),
    attr('region', 'The state or region'),
    attr('postalCode', 'The postal code'),
    attr('country', 'The country, ISO 3166-1 alpha-2'),
    typeAttr(['work', 'home', 'other']),
    primaryAttr,
  ]),
  multiComplex(
    'groups',
    'The provisioning groups the user is a member of (read-only: change them through /Groups)',
    [
      attr('value', 'The group’s id', { mutability: 'readOnly' }),
      attr('$ref', 'The group’s URI', {
        type: 'reference',
        referenceTypes: ['Group'],
        mutability: 'readOnly',
      }),
      attr('display', 'The group’s displayName', { mutability: 'readOnly' }),
    ],
    { mutability: 'readOnly' },
  ),
]

export const ENTERPRISE_ATTRIBUTES: AttributeDef[] = [
  attr('employeeNumber', 'The employee number'),
  attr('costCenter', 'The cost centre'),
  attr('organization', 'The organisation'),
  attr('division', 'The division'),
  attr('department', 'The department'),
  attr('manager', 'The user’s manager (a bare id is taken as its value)', {
    type: 'complex',
    subAttributes: [
      attr('value', 'The manager’s id'),
      attr('$ref', 'The manager’s URI', { type: 'reference', referenceTypes: ['User'] }),
    ],
  }),
]

export const GROUP_ATTRIBUTES: AttributeDef[] = [
  attr('displayName', 'The group’s name, unique in the tenant (case-insensitive)', {
    required: true,
    uniqueness: 'server',
  }),
  multiComplex('members', 'The users of this tenant in the group', [
    attr('value', 'The user’s id', { mutability: 'immutable' }),
    attr('$ref', 'The user’s URI', { type: 'reference', referenceTypes: ['User'], mutability: 'immutable' }),
    attr('type', 'Always "User"', { mutability: 'immutable', canonicalValues: ['User'] }),
  ]),
]

export interface SchemaDef {
  id: string
  name: string
  description: string
  attributes: AttributeDef[]
}

export const SCHEMAS: SchemaDef[] = [
  { id: USER_SCHEMA, name: 'User', description: 'A member of this tenant', attributes: USER_ATTRIBUTES },
  {
    id: ENTERPRISE_SCHEMA,
    name: 'EnterpriseUser',
    description: 'Enterprise attributes of a user',
    attributes: ENTERPRISE_ATTRIBUTES,
  },
  { id: GROUP_SCHEMA, name: 'Group', description: 'A provisioning group', attributes: GROUP_ATTRIBUTES },
]

/** The attributes every resource has (RFC 7643 §3.1), not part of any schema's list. */
export const COMMON_ATTRIBUTES = ['id', 'externalId', 'meta', 'schemas']

export type ResourceKind = 'User' | 'Group'

export interface ResourceDef {
  kind: ResourceKind
  endpoint: '/Users' | '/Groups'
  core: SchemaDef
  extensions: SchemaDef[]
}

export const USER_RESOURCE: ResourceDef = {
  kind: 'User',
  endpoint: '/Users',
  core: SCHEMAS[0] as SchemaDef,
  extensions: [SCHEMAS[1] as SchemaDef],
}
export const GROUP_RESOURCE: ResourceDef = {
  kind: 'Group',
  endpoint: '/Groups',
  core: SCHEMAS[2] as SchemaDef,
  extensions: [],
}

/** An attribute by name, case-insensitively (SCIM attribute names are case-insensitive). */
export function findAttribute(
  list: readonly AttributeDef[] | undefined,
  name: string,
): AttributeDef | undefined {
  if (!list) return undefined
  const lower = name.toLowerCase()
  return list.find((a) => a.name.toLowerCase() === lower)
}

/** A schema URI of the resource (core or extension), case-insensitively. */
export function findSchema(resource: ResourceDef, uri: string): SchemaDef | undefined {
  const lower = uri.toLowerCase()
  return [resource.core, ...resource.extensions].find((s) => s.id.toLowerCase() === lower)
}
