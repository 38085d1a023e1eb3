import { html } from '../../../html.js'
import type { TypedApp } from '../../../http/typed-app.js'
import { selectField } from '../../kit/forms.js'
import { formTokenFields } from '../kit/forms.js'
import { Done, Form, OneOf, Query } from '../kit/inputs.js'
import type { ConsolePages, PageResult, Signed } from '../kit/pages.js'
import { called } from '../kit/refusals.js'

const HERE = '/console/security/platform'
const CHOICES = { optional: 'Optional', required: 'Required' } as const

/**
 * The platform's own setting (docs/console.md "Security"): whether the platform roles need a second
 * factor (`GET/PUT /v1/platform/security`, Platform Administrators only; a change is a step-up
 * operation). When required, a token won without a second factor carries no platform-role permission.
 */
export function platformSecurityRoutes(router: TypedApp, pages: ConsolePages): void {
  async function page(signed: Signed, notice?: string): Promise<PageResult> {
    const { data } = await called(signed.api.GET('/v1/platform/security'))
    const current = data.result.mfaForPlatformRoles
    return [
      200,
      signed.page(
        {
          title: 'Platform security',
          area: 'security',
          crumbs: [
            ['Security', '/console/security'],
            ['Platform security', undefined],
          ],
        },
        html`<h1>Platform security</h1>
${notice ? html`<div class="notice success" role="status"><p>${notice}</p></div>` : ''}
<p>Whether people who hold a platform role (such as Platform Administrator) need a second factor. When it
is required, a sign-in without one keeps the person’s tenant memberships but none of their platform
permissions. Now: <strong>${CHOICES[current]}</strong>.</p>
<form method="post" action="${HERE}" novalidate>${formTokenFields(signed.form())}
${selectField({
  name: 'mfaForPlatformRoles',
  label: 'Second factor for platform roles',
  hint: 'Add a second factor to your own account first: your Security page.',
  value: current,
  choices: Object.entries(CHOICES).map(([value, text]) => ({ value, text })),
})}
<button type="submit">Save</button>
</form>`,
      ),
    ]
  }

  router.get(HERE, { schema: { hide: true, querystring: Query({ done: Done }) } }, (request, reply) =>
    pages.signedIn(request, reply, (signed) =>
      page(signed, request.query.done === 'saved' ? 'The platform security setting was saved.' : undefined),
    ),
  )

  const saveSchema = { hide: true, body: Form({ mfaForPlatformRoles: OneOf(['optional', 'required']) }) }
  router.post(HERE, { schema: saveSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const mfaForPlatformRoles = request.body.mfaForPlatformRoles ?? 'optional'
      await called(signed.api.PUT('/v1/platform/security', { body: { mfaForPlatformRoles } }))
      return { redirect: `${HERE}?done=saved` }
    }),
  )
}
