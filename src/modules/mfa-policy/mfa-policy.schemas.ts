import { type Static, Type } from 'typebox'
import { MFA_POLICIES } from '../../db/schema.js'
import { Body } from '../../http/schemas.js'

/** The platform's security settings (docs/security.md, "Policy"). */

const MfaForPlatformRoles = Type.Enum(MFA_POLICIES, {
  type: 'string',
  description:
    'required: a credential won without a second factor carries no platform-role permission (its tenant ' +
    'memberships still count, under their tenants’ own policies)',
})

export const PlatformSecuritySchema = Type.Object(
  { mfaForPlatformRoles: MfaForPlatformRoles },
  { examples: [{ mfaForPlatformRoles: 'required' }] },
)
export type PlatformSecurity = Static<typeof PlatformSecuritySchema>

export const UpdatePlatformSecurityBody = Body(
  { mfaForPlatformRoles: MfaForPlatformRoles },
  { examples: [{ mfaForPlatformRoles: 'required' }] },
)
