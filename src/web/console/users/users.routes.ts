import { Type } from 'typebox'
import { html } from '../../../html.js'
import { Uuid } from '../../../http/schemas.js'
import type { TypedApp } from '../../../http/typed-app.js'
import { ChosenId, Cursor, Done, Form, OneOf, Query, Typed } from '../kit/inputs.js'
import type { ConsolePages, PageResult, Signed } from '../kit/pages.js'
import { personName } from '../kit/readable.js'
import { ifMatch } from '../kit/record-edits.js'
import { called } from '../kit/refusals.js'
import { importRoutes } from './import.routes.js'
import { mayManageUsers as mayManage } from './may-manage.js'
import { platformRoleChoices } from './role-choices.js'
import { USER_SECURITY_NOTICES, userSecurityRoutes } from './user-security.routes.js'
import { eraseForm, newUserForm, type User, userBody, usersBody } from './users.views.js'

const PAGE_SIZE = 50
const crumbs = (last?: [string, string | undefined]): [string, string | undefined][] => [
  ['Users', last ? '/console/users' : undefined],
  ...(last ? [last] : []),
]

const UserPath = Type.Object({ userId: Uuid() })
const NewUserForm = Form({ email: Typed(), firstName: Typed(), lastName: Typed(), roleId: ChosenId })
const NamesForm = Form({ firstName: Typed(), lastName: Typed() })

/**
 * Platform users (docs/console.md "Users"): search, create, edit, reset link, disable, erase; the CSV
 * import is in import.routes.ts.
 */
export function userRoutes(router: TypedApp, pages: ConsolePages): void {
  importRoutes(router, pages)
  userSecurityRoutes(router, pages)

  const UsersQuery = Query({ q: Typed(), cursor: Cursor })
  router.get('/console/users', { schema: { hide: true, querystring: UsersQuery } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const q = (request.query.q ?? '').trim()
      const cursor = request.query.cursor || undefined
      const { data } = await called(
        signed.api.GET('/v1/users', {
          params: { query: { limit: PAGE_SIZE, ...(q ? { q } : {}), ...(cursor ? { cursor } : {}) } },
        }),
      )
      return [
        200,
        signed.page(
          { title: 'Users', area: 'users', crumbs: crumbs() },
          usersBody({
            users: data.result as User[],
            q,
            nextCursor: data.nextCursor,
            canCreate: mayManage(signed),
          }),
        ),
      ]
    }),
  )

  async function newUserPage(
    signed: Signed,
    values: Record<string, string>,
    errors?: Record<string, string>,
  ): Promise<PageResult> {
    const { choices, value } = await platformRoleChoices(signed, values.roleId)
    values.roleId = value
    return [
      200,
      signed.page(
        {
          title: 'New user',
          area: 'users',
          crumbs: crumbs(['New user', undefined]),
        },
        newUserForm({ token: signed.form(), roles: choices, values, errors }),
      ),
    ]
  }

  router.get('/console/users/new', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, (signed) => newUserPage(signed, {})),
  )

  router.post('/console/users', { schema: { hide: true, body: NewUserForm } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const form = request.body
      const values = {
        email: (form.email ?? '').trim(),
        firstName: (form.firstName ?? '').trim(),
        lastName: (form.lastName ?? '').trim(),
        roleId: form.roleId ?? '',
      }
      const { data } = await called(
        signed.api.POST('/v1/users', {
          headers: { 'idempotency-key': signed.formId },
          body: {
            email: values.email,
            firstName: values.firstName,
            lastName: values.lastName,
            roleId: values.roleId,
          },
        }),
        { form: (errors) => newUserPage(signed, values, errors) },
      )
      // One user in, one record out (the same route takes a bulk array, answered differently).
      const created = 'result' in data && !Array.isArray(data.result) ? data.result : undefined
      if (!created) throw new Error('POST /v1/users answered one user with something else')
      return { redirect: `/console/users/${created.id}` }
    }),
  )

  async function readUser(signed: Signed, userId: string): Promise<{ user: User; etag: string }> {
    const { data, response } = await called(
      signed.api.GET('/v1/users/{userId}', { params: { path: { userId } } }),
    )
    return { user: data.result, etag: response.headers.get('etag') ?? '' }
  }

  async function userPage(
    signed: Signed,
    userId: string,
    errors?: Record<string, string>,
    values?: Record<string, string>,
    notice?: string,
  ): Promise<PageResult> {
    const read = await readUser(signed, userId)
    const name = personName(read.user)
    return [
      200,
      signed.page(
        { title: name, area: 'users', crumbs: crumbs([name, undefined]) },
        userBody({
          user: read.user,
          version: read.etag,
          form: signed.form,
          canManage: mayManage(signed),
          mayReadAudit: signed.login.platformPermissions.includes('VIEW_AUDIT_LOG'),
          errors,
          notice,
          self: read.user.id === signed.login.userId,
          ...(values ? { values } : {}),
        }),
      ),
    ]
  }

  const userSchema = { hide: true, params: UserPath, querystring: Query({ done: Done }) }
  router.get('/console/users/:userId', { schema: userSchema }, (request, reply) =>
    pages.signedIn(request, reply, (signed) =>
      userPage(
        signed,
        request.params.userId,
        undefined,
        undefined,
        USER_SECURITY_NOTICES[request.query.done ?? ''],
      ),
    ),
  )

  const editSchema = { hide: true, params: UserPath, body: NamesForm }
  router.post('/console/users/:userId/edit', { schema: editSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { userId } = request.params
      const values = {
        firstName: (request.body.firstName ?? '').trim(),
        lastName: (request.body.lastName ?? '').trim(),
      }
      await called(
        signed.api.PUT('/v1/users/{userId}', {
          params: { path: { userId } },
          headers: ifMatch(request.body.version),
          body: values,
        }),
        {
          changed: { what: 'user', href: `/console/users/${userId}` },
          form: (errors) => userPage(signed, userId, errors, values),
          formCodes: [400],
        },
      )
      return { redirect: `/console/users/${userId}` }
    }),
  )

  /** One-field updates: the password-reset link and the status. */
  const resetSchema = { hide: true, params: UserPath, body: Form({}) }
  router.post('/console/users/:userId/reset', { schema: resetSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const { userId } = request.params
      await called(
        signed.api.PUT('/v1/users/{userId}', { params: { path: { userId } }, body: { resetPassword: true } }),
      )
      return { redirect: `/console/users/${userId}` }
    }),
  )
  const StatusForm = Form({ status: OneOf(['enabled', 'disabled']) })
  router.post(
    '/console/users/:userId/status',
    { schema: { ...resetSchema, body: StatusForm } },
    (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const { userId } = request.params
        const status = request.body.status ?? 'disabled'
        await called(signed.api.PUT('/v1/users/{userId}', { params: { path: { userId } }, body: { status } }))
        return { redirect: `/console/users/${userId}` }
      }),
  )

  router.get('/console/users/:userId/erase', { schema: { hide: true, params: UserPath } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readUser(signed, request.params.userId)
      return [
        200,
        signed.page(
          { title: 'Erase', area: 'users', crumbs: crumbs(['Erase', undefined]) },
          eraseForm({ user: read.user, token: signed.form() }),
        ),
      ]
    }),
  )

  const eraseSchema = { hide: true, params: UserPath, body: Form({ confirmation: Typed() }) }
  router.post('/console/users/:userId/erase', { schema: eraseSchema }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readUser(signed, request.params.userId)
      const typed = (request.body.confirmation ?? '').trim().toLowerCase()
      if (typed !== read.user.email) {
        const errors = {
          confirmation: typed ? 'does not match: type the person’s e-mail exactly' : 'is required to confirm',
        }
        return [
          200,
          signed.page(
            { title: 'Erase', area: 'users', crumbs: crumbs(['Erase', undefined]) },
            eraseForm({ user: read.user, token: signed.form(), errors }),
          ),
        ]
      }
      await called(signed.api.DELETE('/v1/users/{userId}', { params: { path: { userId: read.user.id } } }))
      return [
        200,
        signed.page(
          { title: 'Erased', area: 'users', crumbs: crumbs(['Erased', undefined]) },
          html`<h1>Erased</h1><p role="status">The person is erased.</p><p><a href="/console/users">Back to the users</a></p>`,
        ),
      ]
    }),
  )
}
