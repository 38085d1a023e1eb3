import type { SafeHtml } from '../../../html.js'
import type { TypedApp } from '../../../http/typed-app.js'
import type { Errors } from '../kit/forms.js'
import { ChosenId, Form, OneOf, Typed } from '../kit/inputs.js'
import type { ConsolePages, PageResult, Signed } from '../kit/pages.js'
import { called } from '../kit/refusals.js'
import {
  type ImportFormValues,
  importPreview,
  importResults,
  importStart,
  type RowOutcome,
} from './import.views.js'
import { readImportCsv } from './import-csv.js'
import { platformRoleChoices } from './role-choices.js'

/** A page of the import, under Users, its title its last crumb. */
function importPage(signed: Signed, title: string, body: SafeHtml): PageResult {
  const crumbs: [string, string | undefined][] = [
    ['Users', '/console/users'],
    [title, undefined],
  ]
  return [200, signed.page({ title, area: 'users', crumbs }, body)]
}

/**
 * The import form (multipart: the file, or the rows pasted or carried on from the preview). A file is
 * bounded by the upload limit (console-plugin.ts); import-csv.ts then bounds the CSV itself, with a
 * message beside the field.
 */
const UPLOAD_TEXT = 1024 * 1024
const ImportForm = Form({
  file: Typed(UPLOAD_TEXT),
  csv: Typed(UPLOAD_TEXT),
  defaultRoleId: ChosenId,
  step: OneOf(['check', 'import']),
})

/**
 * The CSV import of platform users (docs/console.md "Import users"): the file or pasted rows are checked by the bulk
 * `POST /v1/users?dryRun=true` — a result per row, nothing written — and Import sends the same rows to
 * `POST /v1/users` with the form's Idempotency-Key, showing the final result per row. The forms are
 * multipart (a file upload works without JavaScript); the CSV's bounds are in import-csv.ts.
 */
export function importRoutes(router: TypedApp, pages: ConsolePages): void {
  async function startPage(signed: Signed, values: ImportFormValues, errors?: Errors): Promise<PageResult> {
    const { choices, value } = await platformRoleChoices(signed, values.defaultRoleId)
    return importPage(
      signed,
      'Import users',
      importStart({
        token: signed.form(),
        roles: choices,
        values: { ...values, defaultRoleId: value },
        errors,
      }),
    )
  }

  router.get('/console/users/import', { schema: { hide: true } }, (request, reply) =>
    pages.signedIn(request, reply, (signed) => startPage(signed, { csv: '', defaultRoleId: '' })),
  )

  router.post('/console/users/import', { schema: { hide: true, body: ImportForm } }, (request, reply) =>
    pages.signedIn(request, reply, async (signed) => {
      const form = request.body
      const file = form.file ?? ''
      const values = {
        // A chosen file wins over pasted rows; either way the rows checked are shown for changing.
        csv: file.trim() !== '' ? file : (form.csv ?? ''),
        defaultRoleId: form.defaultRoleId ?? '',
      }
      const csv = readImportCsv(values.csv, values.defaultRoleId)
      if ('error' in csv) return startPage(signed, values, { csv: csv.error })

      const dryRun = form.step !== 'import'
      const { data } = await called(
        signed.api.POST('/v1/users', {
          params: { query: dryRun ? { dryRun: true } : {} },
          // The preview writes nothing and needs no key; the import's key makes a double submit show the
          // first result again.
          headers: dryRun ? {} : { 'idempotency-key': signed.formId },
          body: csv.rows.map((row) => row.body) as never,
        }),
      )
      // The array form answers {result: [...], summary}.
      const bulk = 'summary' in data && 'result' in data && Array.isArray(data.result) ? data : undefined
      if (!bulk) throw new Error('POST /v1/users answered an array of users with something else')
      const outcomes = bulk.result as RowOutcome[]
      const rows = { rows: csv.rows, outcomes, headerOf: csv.headerOf }
      if (!dryRun) {
        return importPage(signed, 'Import done', importResults({ ...rows, created: bulk.summary.created }))
      }
      const { choices } = await platformRoleChoices(signed, values.defaultRoleId)
      return importPage(
        signed,
        'Check the rows',
        importPreview({
          ...rows,
          unknown: csv.unknown,
          values,
          importToken: signed.form(),
          checkToken: signed.form(),
          roles: choices,
        }),
      )
    }),
  )
}
