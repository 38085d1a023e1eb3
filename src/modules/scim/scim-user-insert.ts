import type { Selectable } from 'kysely'
import type { NewRow, RelationOf } from '../../db/row-inserts.js'
import type { ScimUsersTable } from '../../db/schema.js'
import { joinPieces, type Piece, param } from '../../db/statement-pieces.js'

/**
 * A new SCIM row (table scim_users, migration 0013) as a row of the write unit (outbox/write-unit.ts): its
 * values from one list of columns, for the statement that writes it with the person's membership
 * (docs/performance.md, "The write unit"; docs/scim.md).
 */

/** The SCIM row of a new user, as stored (its version is the column's default). */
export type NewScimUserRow = Pick<
  Selectable<ScimUsersTable>,
  | 'tenant_id'
  | 'user_id'
  | 'user_name'
  | 'user_name_key'
  | 'email_key'
  | 'external_id'
  | 'active'
  | 'provisioned'
  | 'created'
  | 'updated'
> & {
  /** The resource as the directory sent it, as JSON text. */
  attributes: string
}

/** The SCIM row's columns and their SQL types, in insert order. */
const SCIM_COLUMNS = [
  ['tenant_id', 'uuid'],
  ['user_id', 'uuid'],
  ['user_name', 'text'],
  ['user_name_key', 'text'],
  ['email_key', 'text'],
  ['external_id', 'text'],
  ['active', 'boolean'],
  ['attributes', 'jsonb'],
  ['provisioned', 'boolean'],
  ['created', 'timestamptz'],
  ['updated', 'timestamptz'],
] as const satisfies readonly (readonly [keyof NewScimUserRow, string])[]

/**
 * The SCIM row as relation `scim_user`, answering its version: of the user `userId` names — a parameter,
 * or the user id of the relation the row is selected `from` (the membership the same statement writes,
 * so that no SCIM row is written without it).
 */
export function scimUserRow(
  scim: Omit<NewScimUserRow, 'user_id'>,
  userId: (relation: RelationOf) => Piece,
  from?: string,
): NewRow {
  return {
    as: 'scim_user',
    table: 'scim_users',
    columns: SCIM_COLUMNS.map(([column]) => column),
    values: (relation) =>
      joinPieces(
        SCIM_COLUMNS.map(([column, type]) =>
          column === 'user_id' ? userId(relation) : param(scim[column], type),
        ),
      ),
    ...(from === undefined ? {} : { from }),
    returning: 'version',
    shape: from ?? '',
  }
}
