import { html, type SafeHtml } from '../../html.js'

/**
 * The page kit's table (docs/pages.md): a caption for screen readers, column headers, and rows that a
 * phone shows stacked, each cell after its column's label (`data-label`). A table wider than the screen
 * scrolls inside its wrapper, never the page.
 */

/** A column's header; `hidden`: read by screen readers only (a column of actions), no label on a phone. */
export type Column = string | { label: string; hidden: true }

/** A cell: its content, or its content with a class (`nowrap` for an identifier). */
export type Cell = SafeHtml | string | number | { content: SafeHtml | string; class: string }

function header(column: Column): SafeHtml {
  return typeof column === 'string'
    ? html`<th scope="col">${column}</th>`
    : html`<th scope="col"><span class="skip">${column.label}</span></th>`
}

function cell(column: Column | undefined, value: Cell): SafeHtml {
  const label = typeof column === 'string' ? html` data-label="${column}"` : ''
  return typeof value === 'object' && 'class' in value
    ? html`<td${label} class="${value.class}">${value.content}</td>`
    : html`<td${label}>${value}</td>`
}

export function table<T>(
  caption: string,
  columns: Column[],
  items: readonly T[],
  cells: (item: T, index: number) => Cell[],
): SafeHtml {
  return html`<div class="table-wrap"><table class="stack"><caption class="skip">${caption}</caption>
<thead><tr>${columns.map(header)}</tr></thead>
<tbody>${items.map(
    (item, index) => html`<tr>${cells(item, index).map((value, i) => cell(columns[i], value))}</tr>
`,
  )}</tbody></table></div>`
}
