import type { Kysely } from 'kysely'
import { executeScript } from '../script.js'

/**
 * Tenant roles (docs/api.md#tenant-roles): a tenant's own roles can be switched off (`active`) and offered to its
 * sub-tenants (`shared`). Names are unique within the owning tenant on the normalized key (NFKC,
 * lower-cased, trimmed, inner whitespace collapsed — the tenant-name rule), enforced by a unique index so
 * that two concurrent creates cannot both win. Roles owned by no tenant (platform and built-in roles) are
 * outside that index. Existing rows are all built-in, so their key is simply their lower-cased name.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    alter table roles add column active boolean not null default true;
    alter table roles add column shared boolean not null default false;
    alter table roles add column name_key text;
    update roles set name_key = lower(name);
    alter table roles alter column name_key set not null;
    create unique index roles_tenant_name_key on roles (tenant_id, name_key) where tenant_id is not null;
  `,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    drop index roles_tenant_name_key;
    alter table roles drop column name_key;
    alter table roles drop column shared;
    alter table roles drop column active;
  `,
  )
}
