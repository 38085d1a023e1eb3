import type { Config } from '../../config.js'

/**
 * The links in e-mails (docs/api.md#passwords-and-the-existing-clients-flows): an operator's template, or the service's own page. Placeholders
 * `{token}`, `{userId}`, `{tenantId}` are replaced by their URL-encoded values; an unknown placeholder is
 * left as written.
 */
export type LinkConfig = Pick<Config, 'publicUrl' | 'invitationUrl' | 'passwordResetUrl'>

export function fillLinkTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{(token|userId|tenantId)\}/g, (whole, name: string) =>
    values[name] === undefined ? whole : encodeURIComponent(values[name]),
  )
}

/** The invitation link: TENANTRY_INVITATION_URL, or the acceptance page (docs/api.md#tenant-users-and-invitations). */
export function invitationLink(
  config: LinkConfig,
  values: { token: string; userId: string; tenantId: string },
): string {
  return fillLinkTemplate(
    config.invitationUrl ?? `${config.publicUrl}/invitations/accept?token={token}`,
    values,
  )
}

/** The password-reset link: TENANTRY_PASSWORD_RESET_URL, or the service's reset page. */
export function passwordResetLink(config: LinkConfig, values: { token: string; userId: string }): string {
  return fillLinkTemplate(
    config.passwordResetUrl ?? `${config.publicUrl}/password-reset?token={token}`,
    values,
  )
}
