import { html } from '../../../html.js'
import type { TypedApp } from '../../../http/typed-app.js'
import { apiErrorOf } from '../api/client.js'
import { ChosenId, Form, OneOf, TenantPath, Typed } from '../kit/inputs.js'
import type { ConsolePages, PageResult, Signed } from '../kit/pages.js'
import { roleChoices } from '../kit/tenant-scope.js'
import { memberCrumbs, tenantWithPermissions } from './member-scope.js'
import { inviteForm, inviteResults } from './members.views.js'

/** More addresses than this in one paste is a bulk load (`tenantry users import`), not a form. */
const MAX_INVITES = 100

/** The invitation form: the addresses pasted (one per line or comma-separated), the role, how they join. */
const InviteForm = Form({
  // Room for MAX_INVITES addresses of the API's longest (254 characters) and what separates them.
  emails: Typed(MAX_INVITES * 256),
  roleId: ChosenId,
  mode: OneOf(['invited', 'accepted']),
})

/** Inviting one or many people into a tenant, with a result per person (docs/console.md "Members"). */
export function inviteRoutes(router: TypedApp, pages: ConsolePages): void {
  async function invitePage(
    signed: Signed,
    tenantId: string,
    values = { emails: '', roleId: '', mode: 'invited' },
    errors?: Record<string, string>,
    status = 200,
  ): Promise<PageResult> {
    const found = await tenantWithPermissions(signed, tenantId)
    const roles = await roleChoices(signed, found.tenant)
    if (!values.roleId)
      values.roleId = roles.find((r) => !r.disabledBecause && r.text === 'Agent')?.value ?? ''
    const title = `Invite people to ${found.tenant.name}`
    return [
      status,
      signed.page(
        {
          title: title,
          area: 'tenants',
          crumbs: memberCrumbs(found.tenant, 'Invite'),
        },
        html`<h1>${title}</h1>${inviteForm({ action: `/console/tenants/${tenantId}/members/invite`, token: signed.form(), roles, values, errors })}`,
      ),
    ]
  }

  const path = '/console/tenants/:tenantId/members/invite'
  router.get(path, { schema: { hide: true, params: TenantPath } }, (request, reply) =>
    pages.signedIn(request, reply, (signed) => invitePage(signed, request.params.tenantId)),
  )

  router.post(path, { schema: { hide: true, params: TenantPath, body: InviteForm } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { tenantId } = request.params
      const mode = request.body.mode ?? 'invited'
      const values = { emails: request.body.emails ?? '', roleId: request.body.roleId ?? '', mode }
      const emails = [
        ...new Set(
          values.emails
            .split(/[\s,;]+/)
            .map((e) => e.trim().toLowerCase())
            .filter(Boolean),
        ),
      ]
      const errors: Record<string, string> = {}
      if (emails.length === 0) errors.emails = 'are required: give at least one'
      else if (emails.length > MAX_INVITES) errors.emails = `are too many: at most ${MAX_INVITES} at once`
      if (!values.roleId) errors.roleId = 'is required'
      if (Object.keys(errors).length) return invitePage(signed, tenantId, values, errors)
      const found = await tenantWithPermissions(signed, tenantId)
      // One call per person, each with its own Idempotency-Key from the form's: a resubmit repeats none.
      const results = []
      for (const [index, email] of emails.entries()) {
        const { data, error, response } = await signed.api.POST('/v1/tenants/{tenantId}/users', {
          params: { path: { tenantId } },
          headers: { 'idempotency-key': `${signed.formId}:${index}` },
          body: { email, roleId: values.roleId, status: mode },
        })
        if (data) {
          results.push({
            email,
            ok: true,
            outcome: mode === 'accepted' ? 'Added as a member' : 'Invited: the e-mail is queued',
          })
        } else {
          const refused = apiErrorOf(error, response.status)
          const field = Object.entries(refused.attribute ?? {})
            .map(([f, r]) => `${f} ${r}`)
            .join('; ')
          results.push({ email, ok: false, outcome: `Not done: ${field || refused.message}` })
        }
      }
      return [
        200,
        signed.page(
          {
            title: `Invitations to ${found.tenant.name}`,
            area: 'tenants',
            crumbs: memberCrumbs(found.tenant, 'Invite'),
          },
          inviteResults(found.tenant, results),
        ),
      ]
    }),
  )
}
