import {
  type AttributeDef,
  GROUP_RESOURCE,
  type ResourceDef,
  SCHEMAS,
  type SchemaDef,
  USER_RESOURCE,
} from './scim-attributes.js'
import { MAX_FILTER_RESULTS } from './scim-paging.js'

/**
 * /ServiceProviderConfig, /ResourceTypes and /Schemas (RFC 7643 §5–7), built from the same attribute
 * definitions that validate and store (scim-attributes.ts): what is advertised is what is stored.
 */

const SPC_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'
const RT_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType'
const SCHEMA_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema'

export const RESOURCES: ResourceDef[] = [USER_RESOURCE, GROUP_RESOURCE]

export function serviceProviderConfig(baseUrl: string, docsUrl: string) {
  return {
    schemas: [SPC_SCHEMA],
    documentationUri: docsUrl,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_FILTER_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'Bearer token',
        description: 'A SCIM key of this tenant (POST /v1/tenants/{tenantId}/api-keys with scope "scim")',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${baseUrl}/ServiceProviderConfig` },
  }
}

export function resourceType(resource: ResourceDef, baseUrl: string) {
  return {
    schemas: [RT_SCHEMA],
    id: resource.kind,
    name: resource.kind,
    endpoint: resource.endpoint,
    description: resource.core.description,
    schema: resource.core.id,
    schemaExtensions: resource.extensions.map((e) => ({ schema: e.id, required: false })),
    meta: { resourceType: 'ResourceType', location: `${baseUrl}/ResourceTypes/${resource.kind}` },
  }
}

function attributeDoc(def: AttributeDef): Record<string, unknown> {
  return {
    name: def.name,
    type: def.type,
    multiValued: def.multiValued,
    description: def.description,
    required: def.required,
    caseExact: def.caseExact,
    mutability: def.mutability,
    returned: def.returned,
    uniqueness: def.uniqueness,
    ...(def.canonicalValues ? { canonicalValues: def.canonicalValues } : {}),
    ...(def.referenceTypes ? { referenceTypes: def.referenceTypes } : {}),
    ...(def.subAttributes ? { subAttributes: def.subAttributes.map(attributeDoc) } : {}),
  }
}

export function schemaDoc(schema: SchemaDef, baseUrl: string) {
  return {
    schemas: [SCHEMA_SCHEMA],
    id: schema.id,
    name: schema.name,
    description: schema.description,
    attributes: schema.attributes.map(attributeDoc),
    meta: { resourceType: 'Schema', location: `${baseUrl}/Schemas/${schema.id}` },
  }
}

export function findResourceType(id: string): ResourceDef | undefined {
  return RESOURCES.find((r) => r.kind.toLowerCase() === id.toLowerCase())
}

export function findSchemaDoc(id: string): SchemaDef | undefined {
  return SCHEMAS.find((s) => s.id.toLowerCase() === id.toLowerCase())
}

export { SCHEMAS }
