import { type Kysely, sql } from 'kysely'
import { grantedPermissions } from '../../access/access.repository.js'
import type { Database } from '../../db/schema.js'

/** The reads authentication needs: a user or an API key, by the name the caller gives. */

export async function findUserCredentials(db: Kysely<Database>, by: { id: string } | { email: string }) {
  let query = db
    .selectFrom('users as u')
    .innerJoin('roles as r', 'r.id', 'u.role_id')
    .select([
      'u.id',
      'u.email',
      'u.first_name',
      'u.last_name',
      'u.status',
      'u.role_id',
      'u.password_hash',
      'u.password_changed_at',
      'r.permissions as role_permissions',
      // Whether the platform role's permissions need a second factor (docs/security.md, "Policy").
      sql<boolean>`(select p.mfa_for_platform_roles = 'required' from platform p limit 1)`.as(
        'platform_mfa_required',
      ),
    ])
  query = 'id' in by ? query.where('u.id', '=', by.id) : query.where('u.email', '=', by.email)
  return query.executeTakeFirst()
}

export async function findApiKeyCredentials(db: Kysely<Database>, keyId: string) {
  return db
    .selectFrom('api_keys as k')
    .innerJoin('roles as r', 'r.id', 'k.role_id')
    .select([
      'k.id',
      'k.tenant_id',
      'k.role_id',
      'k.status',
      'k.scope',
      'k.expires_at',
      'k.secret_hash',
      'k.created_by',
      // A key whose role is disabled acts with nothing (docs/api.md#tenant-roles).
      grantedPermissions.as('role_permissions'),
    ])
    .where('k.id', '=', keyId)
    .executeTakeFirst()
}
