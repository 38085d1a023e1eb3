import type { Choice } from '../../kit/forms.js'
import type { Signed } from '../kit/pages.js'
import { ceilingChoices, permissionNames } from '../kit/tenant-scope.js'

/**
 * The platform roles as form choices, those beyond the person's own platform permissions disabled with
 * the reason (the role ceiling made visible), and the choice to start with: `current`, or Platform User.
 */
export async function platformRoleChoices(
  signed: Signed,
  current: string | undefined,
): Promise<{ choices: Choice[]; value: string }> {
  const [roles, names] = await Promise.all([signed.api.GET('/v1/roles'), permissionNames(signed)])
  const mine = new Set<string>(signed.login.platformPermissions)
  const choices = ceilingChoices(roles.data?.result ?? [], mine, names)
  const value =
    current || (choices.find((c) => !c.disabledBecause && c.text === 'Platform User')?.value ?? '')
  return { choices, value }
}
