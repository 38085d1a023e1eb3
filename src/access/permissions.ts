/**
 * The permission catalogue, the built-in roles and the seeded regions (docs/product.md#permissions, docs/product.md#regions-and-time-zones). Their ids are
 * fixed constants, the same in every installation, so clients and scripts may hard-code them.
 */
export const PERMISSIONS = [
  'MANAGE_TENANT',
  'VIEW_ALL_USERS',
  'MANAGE_ALL_USERS',
  'MANAGE_TENANT_ENROLLMENT',
  'VIEW_ALL_PROVIDERS',
  'MANAGE_ALL_PROVIDERS',
  'VIEW_ALL_ROLES',
  'MANAGE_ALL_ROLES',
  'MANAGE_ALL_APP_CREDENTIALS',
  'VIEW_AUDIT_LOG',
  'IDENTITY_PROVIDERS_READ',
  'IDENTITY_PROVIDERS_UPDATE',
  'MANAGE_WEBHOOKS',
] as const

export type Permission = (typeof PERMISSIONS)[number]

export const PERMISSION_DESCRIPTIONS: Record<Permission, string> = {
  MANAGE_TENANT: 'Create tenants and sub-tenants, and update them',
  VIEW_ALL_USERS: 'List and read the users of a tenant',
  MANAGE_ALL_USERS: 'Create and update platform users',
  MANAGE_TENANT_ENROLLMENT: 'Invite users into a tenant and change their membership',
  VIEW_ALL_PROVIDERS: 'Read integrations',
  MANAGE_ALL_PROVIDERS: 'Create and update integrations',
  VIEW_ALL_ROLES: 'Read roles',
  MANAGE_ALL_ROLES: 'Create and update roles',
  MANAGE_ALL_APP_CREDENTIALS: 'Create and manage API keys',
  VIEW_AUDIT_LOG: 'Read the audit log',
  IDENTITY_PROVIDERS_READ: 'Read the identity providers (single sign-on) of a tenant',
  IDENTITY_PROVIDERS_UPDATE: 'Create and update the identity providers (single sign-on) of a tenant',
  MANAGE_WEBHOOKS: 'Create, update and read the webhooks of a tenant and their deliveries',
}

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value)
}

/**
 * Every permission's fixed id (docs/api.md#permissions-and-roles), the same in every installation: role records list these, and
 * requests may name a permission by id or by name. Never change one; a new permission gets a new id.
 */
export const PERMISSION_IDS: Readonly<Record<Permission, string>> = {
  MANAGE_TENANT: '2c962146-93fa-408f-9952-3bc953ab38b1',
  VIEW_ALL_USERS: '346bfdd0-c31b-40d6-8f86-dab07aecad1b',
  MANAGE_ALL_USERS: 'a7fe01d8-3baa-4aab-b3c5-31ba210d0629',
  MANAGE_TENANT_ENROLLMENT: '497bda46-47d9-42e2-8d17-d366929bb8af',
  VIEW_ALL_PROVIDERS: '097c3830-7b85-4ef4-8baa-3fd1ba8ed106',
  MANAGE_ALL_PROVIDERS: '6fc680fb-3291-44be-9768-b11f5d97f511',
  VIEW_ALL_ROLES: 'fb5d463e-a95a-42fa-9ef8-b618263dc310',
  MANAGE_ALL_ROLES: 'b239d17b-fa29-4258-aff2-f107f7d2a7e5',
  MANAGE_ALL_APP_CREDENTIALS: '48dad06e-0271-43ca-bcc5-96f441b9072e',
  VIEW_AUDIT_LOG: '2961088d-a209-44e4-9d69-f7e504a63a7e',
  IDENTITY_PROVIDERS_READ: '26880fce-2af9-4c6c-8ce6-ae0e0a8ff74e',
  IDENTITY_PROVIDERS_UPDATE: 'a63cc8af-32b2-4879-b6bb-3d465ed16c1e',
  MANAGE_WEBHOOKS: '97e2c64b-f320-4ae9-9af4-b3903863b9a3',
}

const PERMISSION_BY_ID: ReadonlyMap<string, Permission> = new Map(
  PERMISSIONS.map((permission) => [PERMISSION_IDS[permission], permission]),
)

/** The permission a request names by id (any case) or by exact name; undefined when none. */
export function permissionNamed(idOrName: string): Permission | undefined {
  if (isPermission(idOrName)) return idOrName
  return PERMISSION_BY_ID.get(idOrName.toLowerCase())
}

/** Permission names → their ids, in catalogue order, each once. */
export function permissionIds(names: Iterable<string>): string[] {
  const held = new Set(names)
  return PERMISSIONS.filter((permission) => held.has(permission)).map(
    (permission) => PERMISSION_IDS[permission],
  )
}

export type RoleScope = 'platform' | 'tenant'

export interface BuiltInRole {
  id: string
  scope: RoleScope
  name: string
  description: string
  permissions: readonly Permission[]
}

export const ROLE_IDS = {
  platformAdministrator: '05bb0c87-e09e-46cc-b8a3-527a9ebfefaf',
  platformUser: 'f80c0847-8db0-4714-98e8-9f198bf9b260',
  administrator: '495800df-a0a0-412a-b084-d487a83fef00',
  supervisor: 'dd0df939-26b8-45fc-9864-86752d861be8',
  agent: '9b99dbec-2499-4f78-a17b-39f21ca52fb4',
} as const

export const BUILT_IN_ROLES: readonly BuiltInRole[] = [
  {
    id: ROLE_IDS.platformAdministrator,
    scope: 'platform',
    name: 'Platform Administrator',
    description: 'Every permission, in every tenant',
    permissions: PERMISSIONS,
  },
  {
    id: ROLE_IDS.platformUser,
    scope: 'platform',
    name: 'Platform User',
    description: 'No platform permission; what the user may do comes from tenant memberships',
    permissions: [],
  },
  {
    id: ROLE_IDS.administrator,
    scope: 'tenant',
    name: 'Administrator',
    description: 'Every permission in the tenant and its sub-tenants',
    permissions: PERMISSIONS,
  },
  {
    id: ROLE_IDS.supervisor,
    scope: 'tenant',
    name: 'Supervisor',
    description: 'Manages the users of the tenant',
    permissions: [
      'VIEW_ALL_USERS',
      'MANAGE_ALL_USERS',
      'MANAGE_TENANT_ENROLLMENT',
      'VIEW_ALL_PROVIDERS',
      'VIEW_ALL_ROLES',
    ],
  },
  {
    id: ROLE_IDS.agent,
    scope: 'tenant',
    name: 'Agent',
    description: 'Handles interactions; reads the users of the tenant',
    permissions: ['VIEW_ALL_USERS'],
  },
]

export interface SeedRegion {
  id: string
  name: string
  description: string
}

export const REGIONS: readonly SeedRegion[] = [
  { id: 'c52c1db7-5b58-40e6-b1a7-ec9ea1f09924', name: 'us-east-1', description: 'US East (N. Virginia)' },
  { id: 'a665ea79-94a3-4efc-9f2a-dd6b372d5a1d', name: 'us-west-2', description: 'US West (Oregon)' },
  { id: '475f9356-cd7c-47c5-8d89-7c19b4611f1f', name: 'ca-central-1', description: 'Canada (Central)' },
  { id: '087ad6a8-bec5-4561-a652-eca12e218912', name: 'eu-west-1', description: 'Europe (Ireland)' },
  { id: '759b5787-0235-435c-8c73-6b7b95e1424d', name: 'eu-central-1', description: 'Europe (Frankfurt)' },
  {
    id: '02ad9706-dd51-4c6d-b519-27916e163eba',
    name: 'ap-southeast-2',
    description: 'Asia Pacific (Sydney)',
  },
]

export const PLATFORM_NAME = 'Platform'
