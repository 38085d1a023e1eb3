import type { Kysely } from 'kysely'
import { passwordAllowedSql } from '../../access/access.repository.js'
import type { Database } from '../../db/schema.js'

/** The reads `POST /v1/login` describes the caller from. */

/** The user with their platform role's name and permissions. */
export async function findLoginUser(db: Kysely<Database>, userId: string) {
  return db
    .selectFrom('users as u')
    .innerJoin('roles as r', 'r.id', 'u.role_id')
    .select([
      'u.id',
      'u.email',
      'u.first_name',
      'u.last_name',
      'u.role_id',
      'r.name as role_name',
      'r.permissions',
    ])
    .where('u.id', '=', userId)
    .executeTakeFirstOrThrow()
}

/**
 * The user's accepted memberships, with their tenants, roles and whether the password counts there, by
 * tenant name: what `POST /v1/login`, `GET /v1/me` and auth-info describe the user from.
 */
export async function listAcceptedMemberships(db: Kysely<Database>, userId: string) {
  return db
    .selectFrom('tenant_users as tu')
    .innerJoin('tenants as t', 't.id', 'tu.tenant_id')
    .innerJoin('roles as r', 'r.id', 'tu.role_id')
    .select([
      't.id as tenant_id',
      't.name as tenant_name',
      't.description as tenant_description',
      't.active',
      'r.id as role_id',
      'r.name as role_name',
      'tu.default_identity_provider',
      passwordAllowedSql().as('password_allowed'),
    ])
    .where('tu.user_id', '=', userId)
    .where('tu.status', '=', 'accepted')
    .orderBy('t.name')
    .execute()
}
