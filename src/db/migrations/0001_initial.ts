import type { Kysely } from 'kysely'
import { executeScript } from '../script.js'

/**
 * The whole first schema: platform, regions, roles, users, tenants, memberships, integrations, API keys,
 * the mail outbox and idempotency records. Frozen once landed: later changes are new migrations.
 *
 * Every tenant-owned table leads its primary key with tenant_id so that it can later be distributed by
 * tenant on a distributed PostgreSQL (docs/scaling.md). SQL stays within what PostgreSQL 15 offers.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    create table platform (
      id uuid primary key,
      name text not null,
      created timestamptz not null
    );

    create table regions (
      id uuid primary key,
      name text not null unique,
      description text not null default ''
    );

    create table roles (
      id uuid primary key,
      scope text not null check (scope in ('platform', 'tenant')),
      tenant_id uuid,
      name text not null,
      description text not null default '',
      permissions text[] not null,
      built_in boolean not null default false,
      created timestamptz not null,
      created_by uuid,
      updated timestamptz not null,
      updated_by uuid
    );

    create table users (
      id uuid primary key,
      email text not null,
      role_id uuid not null references roles (id),
      additional_role_ids uuid[] not null default '{}',
      first_name text not null default '',
      last_name text not null default '',
      external_id text not null default '',
      personal_telephone text,
      status text not null check (status in ('enabled', 'disabled', 'pending', 'invited', 'accepted')),
      alias_platform_user_id bigint generated always as identity,
      default_tenant uuid,
      password_hash text,
      password_changed_at timestamptz,
      reset_password_expiry_date timestamptz,
      created timestamptz not null,
      created_by uuid,
      updated timestamptz not null,
      updated_by uuid,
      constraint users_email_key unique (email),
      constraint users_alias_key unique (alias_platform_user_id)
    );

    create table tenants (
      id uuid primary key,
      name text not null,
      name_key text not null,
      description text not null default '',
      region_id uuid not null references regions (id),
      parent_id uuid not null,
      parent_ids uuid[] not null,
      admin_user_id uuid not null references users (id),
      active boolean not null default true,
      timezone text not null default 'UTC',
      default_identity_provider text,
      cxengage_identity_provider text not null default 'enabled'
        check (cxengage_identity_provider in ('enabled', 'disabled', 'denied')),
      client_log_level text check (client_log_level in ('debug', 'info', 'warn', 'error', 'fatal')),
      outbound_integration_id text,
      capacity_rule_id uuid,
      created timestamptz not null,
      created_by uuid not null,
      updated timestamptz not null,
      updated_by uuid not null,
      constraint tenants_name_key_key unique (name_key)
    );
    create index tenants_parent_id_idx on tenants (parent_id, created, id);
    create index tenants_region_id_idx on tenants (region_id);

    create table tenant_users (
      tenant_id uuid not null references tenants (id),
      user_id uuid not null references users (id),
      role_id uuid not null references roles (id),
      status text not null check (status in ('pending', 'invited', 'accepted', 'disabled')),
      state text not null default 'offline' check (state in ('offline', 'online')),
      no_password boolean,
      default_identity_provider uuid,
      invitation_expiry_date timestamptz,
      invitation_token_hash text,
      invited_by uuid,
      extension text not null default '',
      extensions jsonb not null default '[]',
      active_extension jsonb,
      supervisor_id uuid,
      capacity_rule_id uuid,
      session_started timestamptz,
      session_reason text,
      work_station_id text not null default '',
      client_log_level text,
      created timestamptz not null,
      created_by uuid not null,
      updated timestamptz not null,
      updated_by uuid not null,
      constraint tenant_users_pkey primary key (tenant_id, user_id)
    );
    create index tenant_users_user_id_idx on tenant_users (user_id);
    create unique index tenant_users_invitation_token_hash_key on tenant_users (invitation_token_hash)
      where invitation_token_hash is not null;

    create table integrations (
      tenant_id uuid not null references tenants (id),
      id uuid not null,
      type text not null,
      name text not null,
      name_key text not null,
      description text,
      active boolean not null default false,
      properties jsonb not null,
      created timestamptz not null,
      created_by uuid not null,
      updated timestamptz not null,
      updated_by uuid not null,
      constraint integrations_pkey primary key (tenant_id, id),
      constraint integrations_name_key unique (tenant_id, name_key)
    );

    create table api_keys (
      tenant_id uuid not null references tenants (id),
      id uuid not null,
      name text not null,
      description text not null default '',
      role_id uuid not null references roles (id),
      status text not null default 'enabled' check (status in ('enabled', 'disabled')),
      secret_hash text not null,
      created timestamptz not null,
      created_by uuid not null,
      updated timestamptz not null,
      updated_by uuid not null,
      constraint api_keys_pkey primary key (tenant_id, id)
    );
    -- Basic keyId:secret names the key alone, so the id is also unique on its own.
    create unique index api_keys_id_key on api_keys (id);

    create table outbox (
      id uuid primary key,
      tenant_id uuid,
      kind text not null,
      payload jsonb not null,
      status text not null default 'queued' check (status in ('queued', 'sent', 'failed')),
      attempts integer not null default 0,
      next_attempt_at timestamptz not null,
      locked_until timestamptz,
      last_error text,
      created timestamptz not null,
      sent_at timestamptz
    );
    create index outbox_due_idx on outbox (next_attempt_at) where status = 'queued';

    create table idempotency_keys (
      actor text not null,
      key text not null,
      request_hash text not null,
      status_code integer not null,
      response_headers jsonb not null,
      response_body text not null,
      created timestamptz not null,
      constraint idempotency_keys_pkey primary key (actor, key)
    );
    create index idempotency_keys_created_idx on idempotency_keys (created);
  `,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    'drop table idempotency_keys, outbox, api_keys, integrations, tenant_users, tenants, users, roles, regions, platform',
  )
}
