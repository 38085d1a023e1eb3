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
  api_keys_id_key: () =>
    new AppError('validation_failed', 'API key id collision; retry', { id: 'already exists' }),
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
