import { AppError } from '../errors.js'

/**
 * Unique and foreign-key violations, mapped to domain errors by constraint name — never by message
 * text. Callers may pass context (the offending value) to make the message specific; without it the
 * generic message still names the field.
 */
export type ConstraintContext = Record<string, string | undefined>

const CONSTRAINT_ERRORS: Record<string, (ctx: ConstraintContext) => AppError> = {
  tenants_name_key_key: (ctx) =>
    new AppError(
      'tenant_name_taken',
      ctx.name ? `A tenant named "${ctx.name}" already exists` : 'A tenant with this name already exists',
      { name: 'already exists' },
    ),
  users_email_key: (ctx) =>
    new AppError(
      'email_taken',
      ctx.email
        ? `A user with e-mail "${ctx.email}" already exists`
        : 'A user with this e-mail already exists',
      { email: 'already exists' },
    ),
  tenant_users_pkey: () =>
    new AppError('already_member', 'This user already exists in the tenant', { email: 'already exists' }),
  integrations_pkey: () =>
    new AppError('integration_exists', 'An integration with this id already exists', {
      integrationId: 'already exists',
    }),
  integrations_name_key: (ctx) =>
    new AppError(
      'integration_name_taken',
      ctx.name
        ? `An integration named "${ctx.name}" already exists in this tenant`
        : 'An integration with this name already exists in this tenant',
      { name: 'already exists' },
    ),
  roles_tenant_name_key: (ctx) =>
    new AppError(
      'role_name_taken',
      ctx.name
        ? `A role named "${ctx.name}" already exists in this tenant`
        : 'A role with this name already exists in this tenant',
      { name: 'already exists' },
    ),
  tenants_region_id_fkey: () =>
    new AppError('validation_failed', 'regionId does not name a region', { regionId: 'does not exist' }),
  tenants_admin_user_id_fkey: () =>
    new AppError('validation_failed', 'adminUserId does not name a platform user', {
      adminUserId: 'does not exist',
    }),
  // SCIM's own keys (migration 0013; docs/scim.md): answered in SCIM's terms as 409 `uniqueness`, or
  // 400 `invalidValue` for a group member that is no longer a member of the tenant.
  scim_users_user_name_key: (ctx) =>
    new AppError(
      'scim_user_name_taken',
      ctx.userName
        ? `A user with userName "${ctx.userName}" already exists`
        : 'A user with this userName already exists',
      { userName: 'already exists' },
    ),
  scim_users_email_key: (ctx) => scimEmailTaken(ctx),
  // The person was given a SCIM row meanwhile: the tenant's SCIM user with that e-mail exists.
  scim_users_pkey: (ctx) => scimEmailTaken(ctx),
  scim_groups_display_name_key: (ctx) =>
    new AppError(
      'scim_group_name_taken',
      ctx.name
        ? `A group named "${ctx.name}" already exists`
        : 'A group with this displayName already exists',
      { displayName: 'already exists' },
    ),
  scim_group_members_membership_fkey: () =>
    new AppError('validation_failed', 'members: a member is not a user of this tenant', {
      members: 'not a user of this tenant',
    }),
  api_keys_id_key: () =>
    new AppError('validation_failed', 'API key id collision; retry', { id: 'already exists' }),
}

function scimEmailTaken(ctx: ConstraintContext): AppError {
  return new AppError(
    'scim_email_taken',
    ctx.email ? `A user with e-mail "${ctx.email}" already exists` : 'A user with this e-mail already exists',
    { email: 'already exists' },
  )
}

interface PgError {
  code?: string
  constraint?: string
}

const UNIQUE_VIOLATION = '23505'
const FOREIGN_KEY_VIOLATION = '23503'

/** The domain error for a database constraint violation, or undefined when it is not one we know. */
function constraintError(error: unknown, ctx: ConstraintContext = {}): AppError | undefined {
  const { code, constraint } = (error ?? {}) as PgError
  if ((code !== UNIQUE_VIOLATION && code !== FOREIGN_KEY_VIOLATION) || !constraint) return undefined
  return CONSTRAINT_ERRORS[constraint]?.(ctx)
}

/** Runs a write and turns a known constraint violation into its domain error. */
export async function withConstraintErrors<T>(
  work: () => Promise<T>,
  ctx: ConstraintContext = {},
): Promise<T> {
  try {
    return await work()
  } catch (error) {
    throw constraintError(error, ctx) ?? error
  }
}
