import { LIST_SCHEMA } from './scim-attributes.js'
import { invalidValue } from './scim-error.js'
import { attributeList, project, type Resource } from './scim-resources.js'

/** startIndex / count (RFC 7644 §3.4.2.4) and the ListResponse; count defaults to and stops at 1000. */
export const MAX_FILTER_RESULTS = 1000

export interface ListQuery {
  filter?: string | undefined
  startIndex?: string | number | undefined
  count?: string | number | undefined
  attributes?: string | undefined
  excludedAttributes?: string | undefined
}

function integer(value: string | number | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined
  const n = typeof value === 'number' ? value : Number(value)
  if (!Number.isInteger(n)) throw invalidValue(`${name} must be an integer`)
  return n
}

export function listResponse(all: Resource[], query: ListQuery) {
  const start = Math.max(1, integer(query.startIndex, 'startIndex') ?? 1)
  const count = Math.min(MAX_FILTER_RESULTS, Math.max(0, integer(query.count, 'count') ?? MAX_FILTER_RESULTS))
  const page = all.slice(start - 1, start - 1 + count)
  const include = attributeList(query.attributes)
  const exclude = attributeList(query.excludedAttributes)
  return {
    schemas: [LIST_SCHEMA],
    totalResults: all.length,
    startIndex: start,
    itemsPerPage: page.length,
    Resources: page.map((r) => project(r, include, exclude)),
  }
}
