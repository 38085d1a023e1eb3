import { html, type SafeHtml } from '../../../html.js'
import { type Choice, type Errors, errorSummary, selectField, textArea } from '../../kit/forms.js'
import { table } from '../../kit/tables.js'
import type { FormToken } from '../kit/form-token.js'
import { formTokenFields } from '../kit/forms.js'
import type { ImportRow } from './import-csv.js'

export const IMPORT_LABELS = { csv: 'CSV', defaultRoleId: 'Role' }

/** A row's answer from the bulk API: 200 valid (dry run), 201 created, or its error. */
export interface RowOutcome {
  status: number
  result?: { id: string } | undefined
  error?: { message: string; attribute?: Record<string, string> | undefined } | undefined
}

export interface ImportFormValues {
  csv: string
  defaultRoleId: string
}

/** The form of the check: a file or pasted rows, and the role of rows that name none. */
export function importForm(o: {
  token: FormToken
  roles: Choice[]
  values: ImportFormValues
  errors?: Errors | undefined
  heading?: string
}): SafeHtml {
  return html`${o.heading ? html`<h2>${o.heading}</h2>` : ''}
<form method="post" action="/console/users/import" enctype="multipart/form-data" novalidate>${formTokenFields(o.token)}
<input type="hidden" name="step" value="check">
<div class="field">
<label for="file">CSV file</label><p class="hint" id="file-hint">A .csv file whose first line names the columns</p>
<input type="file" id="file" name="file" accept=".csv,text/csv" aria-describedby="file-hint">
</div>
${textArea({ name: 'csv', label: 'CSV', hint: 'Or paste the rows here, the header line first', value: o.values.csv, errors: o.errors, rows: 8 })}
${selectField({ name: 'defaultRoleId', label: 'Role', hint: 'The platform role of rows whose roleId column is empty.', value: o.values.defaultRoleId, errors: o.errors, choices: o.roles })}
<button type="submit">Check the rows</button>
</form>`
}

export function importStart(o: {
  token: FormToken
  roles: Choice[]
  values: ImportFormValues
  errors?: Errors | undefined
}): SafeHtml {
  return html`${errorSummary(o.errors, IMPORT_LABELS)}<h1>Import users</h1>
<p>A CSV with the columns of <code>tenantry users import</code>: <strong>email</strong> (required),
firstName, lastName, roleId, externalId, status, personalTelephone, additionalRoleIds (separated by
<code>;</code>), tenantId, tenantRoleId and tenantStatus. Headers ignore case, spaces, dashes and
underscores, so "E-mail" and "First name" work too. At most 1,000 rows (256 KB); larger files go through the
command-line tool.</p>
<p>First every row is checked and you see its result; nothing is written until you choose Import.</p>
${importForm(o)}`
}

function outcomeText(outcome: RowOutcome | undefined, headerOf: Map<string, string>): SafeHtml {
  if (!outcome) return html`<span class="tag failed">No answer</span>`
  if (outcome.status === 200) return html`<span class="tag enabled">Would be created</span>`
  if (outcome.status === 201) {
    return html`<span class="tag enabled">Created</span>${
      outcome.result ? html` <a href="/console/users/${outcome.result.id}">Open</a>` : ''
    }`
  }
  const fields = Object.entries(outcome.error?.attribute ?? {})
  const why = fields.length
    ? fields.map(([field, reason]) => `${headerOf.get(field) ?? field}: ${reason}`).join('; ')
    : (outcome.error?.message ?? `refused (${outcome.status})`)
  return html`<span class="tag failed">Not created</span> ${why}`
}

function rowsTable(rows: ImportRow[], outcomes: RowOutcome[], headerOf: Map<string, string>): SafeHtml {
  return table('Result per row', ['Line', 'E-mail', 'Result'], rows, (row, i) => [
    row.line,
    row.email || '(none)',
    outcomeText(outcomes[i], headerOf),
  ])
}

function unknownColumns(unknown: string[]): SafeHtml | '' {
  return unknown.length
    ? html`<div class="notice warning"><p>These columns name no field and were left out: ${unknown.join(', ')}.</p></div>`
    : ''
}

const plural = (n: number, one: string, many: string) =>
  `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`

/** The dry run's answer: a result per row, nothing written; Import sends the same rows for real. */
export function importPreview(o: {
  rows: ImportRow[]
  outcomes: RowOutcome[]
  headerOf: Map<string, string>
  unknown: string[]
  values: ImportFormValues
  importToken: FormToken
  checkToken: FormToken
  roles: Choice[]
}): SafeHtml {
  const valid = o.outcomes.filter((outcome) => outcome.status === 200).length
  const problems = o.rows.length - valid
  return html`<h1>Check the rows</h1>
<div class="notice" role="status"><p>${plural(o.rows.length, 'row', 'rows')}: ${plural(valid, 'would be created', 'would be created')}, ${plural(problems, 'has a problem', 'have a problem')}. Nothing has been written yet.</p></div>
${unknownColumns(o.unknown)}${rowsTable(o.rows, o.outcomes, o.headerOf)}
${
  valid > 0
    ? html`<form method="post" action="/console/users/import" enctype="multipart/form-data">${formTokenFields(o.importToken)}
<input type="hidden" name="step" value="import">
<input type="hidden" name="csv" value="${o.values.csv}">
<input type="hidden" name="defaultRoleId" value="${o.values.defaultRoleId}">
${problems > 0 ? html`<p>Rows with a problem are not created: correct them below and check again, or import the rest now.</p>` : ''}
<button type="submit">Import ${plural(valid, 'user', 'users')}</button>
</form>`
    : html`<p>Nothing can be imported yet: correct the rows below and check again.</p>`
}
${importForm({ token: o.checkToken, roles: o.roles, values: o.values, heading: 'Change the rows' })}`
}

/** The import's answer: the final result of every row. */
export function importResults(o: {
  rows: ImportRow[]
  outcomes: RowOutcome[]
  headerOf: Map<string, string>
  created: number
}): SafeHtml {
  const failed = o.rows.length - o.created
  return html`<h1>Import done</h1>
<div class="notice success" role="status"><p>${plural(o.created, 'user', 'users')} created, ${plural(failed, 'row', 'rows')} not created, of ${plural(o.rows.length, 'row', 'rows')}.</p></div>
${rowsTable(o.rows, o.outcomes, o.headerOf)}
<p><a href="/console/users/import">Import more</a></p>
<p><a href="/console/users">Back to the users</a></p>`
}
