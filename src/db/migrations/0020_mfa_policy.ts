import { type Kysely, sql } from 'kysely'
import { executeScript } from '../script.js'

/**
 * The second-factor policy (docs/security.md, "Policy"):
 *
 * - a tenant's `mfa_policy` (`optional` | `required`), the grace its members have to add a factor once the
 *   policy binds them (`mfa_grace_days`, 0–90), whether a sign-in through its identity provider counts as a
 *   second factor always or only when the provider asserted one (`mfa_accept_idp`), and when the policy was
 *   last turned on (`mfa_policy_since`, null while optional): a member's grace starts there;
 * - the platform's `mfa_for_platform_roles`: whether a platform role's permissions need a second factor;
 * - a membership's `accepted_at`: when it was accepted, the other start of a member's grace. A membership
 *   written accepted has it null and its `created` stands for it; the trigger stamps it with the write's own
 *   `updated` (the service's clock) when an invitation or a pending membership becomes accepted, on every
 *   path that accepts one (the invitee, an administrator, SCIM, SQL by hand). Re-enabling a disabled
 *   membership keeps the first acceptance: disabling and enabling again starts no new grace.
 *
 * Closed lists are domains, as migration 0012 explains.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    create domain mfa_policy as text
      constraint mfa_policy_check check (value in ('optional', 'required'));
    create domain mfa_accept_idp as text
      constraint mfa_accept_idp_check check (value in ('always', 'asserted'));
    create domain mfa_grace_days as smallint
      constraint mfa_grace_days_check check (value between 0 and 90);
    alter table tenants add column mfa_policy mfa_policy not null default 'optional';
    alter table tenants add column mfa_grace_days mfa_grace_days not null default 7;
    alter table tenants add column mfa_accept_idp mfa_accept_idp not null default 'always';
    alter table tenants add column mfa_policy_since timestamptz;
    alter table platform add column mfa_for_platform_roles mfa_policy not null default 'optional';
    alter table tenant_users add column accepted_at timestamptz;
  `,
  )
  // One statement, sent whole: executeScript would split the body at its semicolons.
  await sql
    .raw(`
    create function tenantry_membership_accepted() returns trigger language plpgsql as $$
    begin
      new.accepted_at := new.updated;
      return new;
    end
    $$`)
    .execute(db)
  await executeScript(
    db,
    `
    create trigger tenant_users_accepted before update of status on tenant_users
    for each row when (new.status = 'accepted' and old.status in ('pending', 'invited'))
    execute function tenantry_membership_accepted();
  `,
  )
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await executeScript(
    db,
    `
    drop trigger tenant_users_accepted on tenant_users;
    drop function tenantry_membership_accepted();
    alter table tenant_users drop column accepted_at;
    alter table platform drop column mfa_for_platform_roles;
    alter table tenants drop column mfa_policy_since;
    alter table tenants drop column mfa_accept_idp;
    alter table tenants drop column mfa_grace_days;
    alter table tenants drop column mfa_policy;
    drop domain mfa_grace_days;
    drop domain mfa_accept_idp;
    drop domain mfa_policy;
  `,
  )
}
