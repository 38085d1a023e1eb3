import type { Kysely } from 'kysely'
import { executeScript } from '../script.js'

/**
 * SCIM 2.0 (docs/scim.md): an API key's scope (`api` or `scim`) and optional expiry, and the scim module's
 * own tables — per-tenant settings, the SCIM attributes of a member as its directory sent them, the
 * provisioning groups and their members. A SCIM user and a group member belong to a membership: when the
 * membership goes (by SCIM, by `/v1`, by erasure), their SCIM data goes with it (`on delete cascade`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    create domain api_key_scope as text constraint api_key_scope_check check (value in ('api', 'scim'));
    alter table api_keys add column scope api_key_scope not null default 'api';
    alter table api_keys add column expires_at timestamptz;

    create table scim_settings (
      tenant_id uuid primary key references tenants (id),
      default_role_id uuid not null references roles (id),
      updated timestamptz not null,
      updated_by uuid not null
    );

    create table scim_users (
      tenant_id uuid not null,
      user_id uuid not null,
      user_name text not null,
      user_name_key text not null,
      email_key text,
      external_id text,
      active boolean,
      attributes jsonb not null,
      provisioned boolean not null default false,
      created timestamptz not null,
      updated timestamptz not null,
      version integer not null default 1,
      constraint scim_users_pkey primary key (tenant_id, user_id),
      constraint scim_users_membership_fkey foreign key (tenant_id, user_id)
        references tenant_users (tenant_id, user_id) on delete cascade
    );
    create unique index scim_users_user_name_key on scim_users (tenant_id, user_name_key);
    create unique index scim_users_email_key on scim_users (tenant_id, email_key) where email_key is not null;
    create index scim_users_external_id_idx on scim_users (tenant_id, external_id) where external_id is not null;

    create table scim_groups (
      tenant_id uuid not null references tenants (id),
      id uuid not null,
      display_name text not null,
      display_name_key text not null,
      external_id text,
      role_id uuid references roles (id),
      priority integer not null default 100,
      created timestamptz not null,
      updated timestamptz not null,
      version integer not null default 1,
      constraint scim_groups_pkey primary key (tenant_id, id)
    );
    create unique index scim_groups_display_name_key on scim_groups (tenant_id, display_name_key);
    create index scim_groups_external_id_idx on scim_groups (tenant_id, external_id) where external_id is not null;

    create table scim_group_members (
      tenant_id uuid not null,
      group_id uuid not null,
      user_id uuid not null,
      constraint scim_group_members_pkey primary key (tenant_id, group_id, user_id),
      constraint scim_group_members_group_fkey foreign key (tenant_id, group_id)
        references scim_groups (tenant_id, id) on delete cascade,
      constraint scim_group_members_membership_fkey foreign key (tenant_id, user_id)
        references tenant_users (tenant_id, user_id) on delete cascade
    );
    create index scim_group_members_user_idx on scim_group_members (tenant_id, user_id);
  `,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    drop table scim_group_members;
    drop table scim_groups;
    drop table scim_users;
    drop table scim_settings;
    alter table api_keys drop column expires_at;
    alter table api_keys drop column scope;
    drop domain api_key_scope;
  `,
  )
}
