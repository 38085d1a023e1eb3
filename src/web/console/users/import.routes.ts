import type { FastifyInstance } from 'fastify'
import { apiErrorOf } from '../api/client.js'
import { type Errors, text } from '../kit/forms.js'
import { type ConsolePages, type PageResult, refusalPage, type Signed } from '../kit/pages.js'
import {
  type ImportFormValues,
  importPreview,
  importResults,
  importStart,
  type RowOutcome,
} from './import.views.js'
import { readImportCsv } from './import-csv.js'
import { platformRoleChoices } from './role-choices.js'

const crumbs = (last: string): [string, string | undefined][] => [
  ['Users', '/console/users'],
  [last, undefined],
]

/**
 * The CSV import of platform users (API.md §17): the file or pasted rows are checked by the bulk
 * `POST /v1/users?dryRun=true` — a result per row, nothing written — and Import sends the same rows to
 * `POST /v1/users` with the form's Idempotency-Key, showing the final result per row. The forms are
 * multipart (a file upload works without JavaScript); the CSV's bounds are in import-csv.ts.
 */
export function importRoutes(router: FastifyInstance, pages: ConsolePages): void {
  async function startPage(signed: Signed, values: ImportFormValues, errors?: Errors): Promise<PageResult> {
    const { choices, value } = await platformRoleChoices(signed, values.defaultRoleId)
    const title = errors ? 'Error: Import users' : 'Import users'
    return [
      200,
      signed.page(
        { title, area: 'users', crumbs: crumbs('Import users') },
        importStart({
          token: signed.form(),
          roles: choices,
          values: { ...values, defaultRoleId: value },
          errors,
        }),
      ),
    ]
  }

  router.get('/console/users/import', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, (signed) => startPage(signed, { csv: '', defaultRoleId: '' })),
  )

  router.post('/console/users/import', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const form = request.body as Record<string, unknown>
      const file = text(form.file)
      const values = {
        // A chosen file wins over pasted rows; either way the rows checked are shown for changing.
        csv: file.trim() !== '' ? file : text(form.csv),
        defaultRoleId: text(form.defaultRoleId),
      }
      const csv = readImportCsv(values.csv, values.defaultRoleId)
      if ('error' in csv) return startPage(signed, values, { csv: csv.error })

      const dryRun = text(form.step) !== 'import'
      const { data, error, response } = await signed.api.POST('/v1/users', {
        params: { query: dryRun ? { dryRun: true } : {} },
        // The preview writes nothing and needs no key; the import's key makes a double submit show the
        // first result again.
        headers: dryRun ? {} : { 'idempotency-key': signed.formId },
        body: csv.rows.map((row) => row.body) as never,
      })
      // The array form answers {result: [...], summary}; anything else is a refusal of the whole request.
      const bulk =
        data && 'summary' in data && 'result' in data && Array.isArray(data.result) ? data : undefined
      if (!bulk) return refusalPage(signed, apiErrorOf(error, response.status))
      const outcomes = bulk.result as RowOutcome[]
      if (!dryRun) {
        return [
          200,
          signed.page(
            { title: 'Import done', area: 'users', crumbs: crumbs('Import done') },
            importResults({
              rows: csv.rows,
              outcomes,
              headerOf: csv.headerOf,
              created: bulk.summary.created,
            }),
          ),
        ]
      }
      const { choices } = await platformRoleChoices(signed, values.defaultRoleId)
      return [
        200,
        signed.page(
          { title: 'Check the rows', area: 'users', crumbs: crumbs('Check the rows') },
          importPreview({
            rows: csv.rows,
            outcomes,
            headerOf: csv.headerOf,
            unknown: csv.unknown,
            values,
            importToken: signed.form(),
            checkToken: signed.form(),
            roles: choices,
          }),
        ),
      ]
    }),
  )
}
