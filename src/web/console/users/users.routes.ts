import type { FastifyInstance } from 'fastify'
import { html } from '../../../html.js'
import { apiErrorOf } from '../api/client.js'
import { text } from '../kit/forms.js'
import {
  type ConsolePages,
  changedMeanwhilePage,
  formErrorsOf,
  type PageResult,
  refusalPage,
  type Signed,
} from '../kit/pages.js'
import { personName } from '../kit/readable.js'
import { UUID } from '../kit/tenant-scope.js'
import { importRoutes } from './import.routes.js'
import { mayManageUsers as mayManage } from './may-manage.js'
import { platformRoleChoices } from './role-choices.js'
import { eraseForm, newUserForm, type User, userBody, usersBody } from './users.views.js'

const PAGE_SIZE = 50
const crumbs = (last?: [string, string | undefined]): [string, string | undefined][] => [
  ['Users', last ? '/console/users' : undefined],
  ...(last ? [last] : []),
]

/**
 * Platform users (API.md §17 "Platform users"): search, create, edit, reset link, disable, erase; the CSV
 * import is in import.routes.ts.
 */
export function userRoutes(router: FastifyInstance, pages: ConsolePages): void {
  importRoutes(router, pages)

  router.get('/console/users', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const query = request.query as Record<string, unknown>
      const q = text(query.q).trim()
      const cursor = text(query.cursor) || undefined
      const { data, error, response } = await signed.api.GET('/v1/users', {
        params: { query: { limit: PAGE_SIZE, ...(q ? { q } : {}), ...(cursor ? { cursor } : {}) } },
      })
      if (!data) return refusalPage(signed, apiErrorOf(error, response.status))
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
          title: errors ? 'Error: New user' : 'New user',
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

  router.post('/console/users', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const form = request.body as Record<string, unknown>
      const values = {
        email: text(form.email).trim(),
        firstName: text(form.firstName).trim(),
        lastName: text(form.lastName).trim(),
        roleId: text(form.roleId),
      }
      const { data, error, response } = await signed.api.POST('/v1/users', {
        headers: { 'idempotency-key': signed.formId },
        body: {
          email: values.email,
          firstName: values.firstName,
          lastName: values.lastName,
          roleId: values.roleId,
        },
      })
      // One user in, one record out (the same route takes a bulk array, answered differently).
      const created = data && 'result' in data && !Array.isArray(data.result) ? data.result : undefined
      if (created) return { redirect: `/console/users/${created.id}` }
      const refused = apiErrorOf(error, response.status)
      if (refused.code !== 400 && refused.code !== 409) return refusalPage(signed, refused)
      return newUserPage(signed, values, formErrorsOf(refused))
    }),
  )

  async function readUser(
    signed: Signed,
    userId: string,
  ): Promise<{ refused: PageResult } | { user: User; etag: string }> {
    if (!UUID.test(userId))
      return {
        refused: refusalPage(signed, { code: 404, reason: 'user_not_found', message: 'No such user' }),
      }
    const { data, error, response } = await signed.api.GET('/v1/users/{userId}', {
      params: { path: { userId } },
    })
    if (!data) return { refused: refusalPage(signed, apiErrorOf(error, response.status)) }
    return { user: data.result, etag: response.headers.get('etag') ?? '' }
  }

  async function userPage(
    signed: Signed,
    userId: string,
    errors?: Record<string, string>,
    values?: Record<string, string>,
  ): Promise<PageResult> {
    const read = await readUser(signed, userId)
    if ('refused' in read) return read.refused
    const name = personName(read.user)
    return [
      200,
      signed.page(
        { title: errors ? `Error: ${name}` : name, area: 'users', crumbs: crumbs([name, undefined]) },
        userBody({
          user: read.user,
          version: read.etag,
          form: signed.form,
          canManage: mayManage(signed),
          mayReadAudit: signed.login.platformPermissions.includes('VIEW_AUDIT_LOG'),
          errors,
          ...(values ? { values } : {}),
        }),
      ),
    ]
  }

  const param = (request: { params: unknown }) => (request.params as { userId: string }).userId

  router.get('/console/users/:userId', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, (signed) => userPage(signed, param(request))),
  )

  router.post('/console/users/:userId/edit', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const userId = param(request)
      const form = request.body as Record<string, unknown>
      const values = { firstName: text(form.firstName).trim(), lastName: text(form.lastName).trim() }
      if (!UUID.test(userId))
        return refusalPage(signed, { code: 404, reason: 'user_not_found', message: 'No such user' })
      const { data, error, response } = await signed.api.PUT('/v1/users/{userId}', {
        params: { path: { userId } },
        headers: { 'if-match': text(form.version) || '"none"' },
        body: values,
      })
      if (data) return { redirect: `/console/users/${userId}` }
      const refused = apiErrorOf(error, response.status)
      if (refused.code === 412) return changedMeanwhilePage(signed, 'user', `/console/users/${userId}`)
      if (refused.code !== 400) return refusalPage(signed, refused)
      return userPage(signed, userId, formErrorsOf(refused), values)
    }),
  )

  /** One-field updates: the password-reset link and the status. */
  for (const [path, bodyOf] of [
    ['reset', () => ({ resetPassword: true })],
    [
      'status',
      (form: Record<string, unknown>) => ({
        status: text(form.status) === 'enabled' ? 'enabled' : 'disabled',
      }),
    ],
  ] as const) {
    router.post(`/console/users/:userId/${path}`, { schema: { hide: true } }, (request, reply) =>
      pages.signedIn(request, reply, async (signed) => {
        const userId = param(request)
        if (!UUID.test(userId))
          return refusalPage(signed, { code: 404, reason: 'user_not_found', message: 'No such user' })
        const { data, error, response } = await signed.api.PUT('/v1/users/{userId}', {
          params: { path: { userId } },
          body: bodyOf(request.body as Record<string, unknown>) as never,
        })
        if (!data) return refusalPage(signed, apiErrorOf(error, response.status))
        return { redirect: `/console/users/${userId}` }
      }),
    )
  }

  router.get('/console/users/:userId/erase', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readUser(signed, param(request))
      if ('refused' in read) return read.refused
      return [
        200,
        signed.page(
          { title: 'Erase', area: 'users', crumbs: crumbs(['Erase', undefined]) },
          eraseForm({ user: read.user, token: signed.form() }),
        ),
      ]
    }),
  )

  router.post('/console/users/:userId/erase', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const read = await readUser(signed, param(request))
      if ('refused' in read) return read.refused
      const typed = text((request.body as Record<string, unknown>).confirmation)
        .trim()
        .toLowerCase()
      if (typed !== read.user.email) {
        const errors = {
          confirmation: typed ? 'does not match: type the person’s e-mail exactly' : 'is required to confirm',
        }
        return [
          200,
          signed.page(
            { title: 'Error: Erase', area: 'users', crumbs: crumbs(['Erase', undefined]) },
            eraseForm({ user: read.user, token: signed.form(), errors }),
          ),
        ]
      }
      const { error, response } = await signed.api.DELETE('/v1/users/{userId}', {
        params: { path: { userId: read.user.id } },
      })
      if (response.status >= 400) return refusalPage(signed, apiErrorOf(error, response.status))
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
