import { Type } from 'typebox'
import { html } from '../../../html.js'
import { Uuid } from '../../../http/schemas.js'
import type { TypedApp } from '../../../http/typed-app.js'
import { formTokenFields } from '../kit/forms.js'
import { Form } from '../kit/inputs.js'
import type { ConsolePages, Signed } from '../kit/pages.js'
import { personName } from '../kit/readable.js'
import { called } from '../kit/refusals.js'
import type { User } from './users.views.js'

const UserPath = Type.Object({ userId: Uuid() })

/** The notices a user's page shows after these actions (`?done=`). */
export const USER_SECURITY_NOTICES: Record<string, string> = {
  'factors-reset':
    'Their second factors and recovery codes are removed and they are signed out everywhere. They were sent an e-mail saying so.',
  'signed-out': 'They are signed out everywhere: every session of theirs has ended.',
}

/** One destructive action on a person, with its confirmation page (docs/console.md "Users"). */
interface Action {
  path: string
  title: string
  button: string
  /** What the action does, said on the confirmation page. */
  explains: string
  run: (signed: Signed, userId: string) => Promise<unknown>
  done: keyof typeof USER_SECURITY_NOTICES
}

const ACTIONS: Action[] = [
  {
    path: 'reset-factors',
    title: 'Reset second factors',
    button: 'Reset second factors',
    explains:
      'Removes every second factor (authenticator apps and passkeys) and recovery code of this person, and signs them out everywhere. They sign in with their password alone next time, and then add a factor again where a policy asks for one. They are sent an e-mail saying so. Use it when they have lost their phone or passkey and their recovery codes.',
    run: (signed, userId) =>
      called(signed.api.DELETE('/v1/users/{userId}/factors', { params: { path: { userId } } })),
    done: 'factors-reset',
  },
  {
    path: 'sign-out-everywhere',
    title: 'Sign out everywhere',
    button: 'Sign out everywhere',
    explains:
      'Ends every session of this person, in the console and in every program that signed in as them: their tokens stop working within a second. They can sign in again with their password (and second factor); to stop them altogether, disable them.',
    run: (signed, userId) =>
      called(signed.api.DELETE('/v1/users/{userId}/sessions', { params: { path: { userId } } })),
    done: 'signed-out',
  },
]

/**
 * A platform user's "Reset second factors" and "Sign out everywhere" (docs/console.md "Users"): each a
 * confirmation page saying what it does, then the API (`DELETE /v1/users/{id}/factors`, a step-up
 * operation; `DELETE /v1/users/{id}/sessions`), then the user's page with a notice.
 */
export function userSecurityRoutes(router: TypedApp, pages: ConsolePages): void {
  for (const action of ACTIONS) {
    const path = `/console/users/:userId/${action.path}`
    router.get(path, { schema: { hide: true, params: UserPath } }, (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const { userId } = request.params
        const { data } = await called(signed.api.GET('/v1/users/{userId}', { params: { path: { userId } } }))
        const user: User = data.result
        const name = personName(user)
        return [
          200,
          signed.page(
            {
              title: action.title,
              area: 'users',
              crumbs: [
                ['Users', '/console/users'],
                [name, `/console/users/${user.id}`],
                [action.title, undefined],
              ],
            },
            html`<h1>${action.title}: ${name}</h1>
<div class="notice warning"><p>${action.explains}</p></div>
<form method="post" action="/console/users/${user.id}/${action.path}">${formTokenFields(signed.form())}
<div class="actions"><button type="submit" class="warning">${action.button}</button>
<a href="/console/users/${user.id}">Cancel</a></div>
</form>`,
          ),
        ]
      }),
    )
    router.post(path, { schema: { hide: true, params: UserPath, body: Form({}) } }, (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const { userId } = request.params
        await action.run(signed, userId)
        return { redirect: `/console/users/${userId}?done=${action.done}` }
      }),
    )
  }
}
