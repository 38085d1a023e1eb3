import { type SelectQueryBuilder, type StringReference, sql } from 'kysely'

/** What a repository's list function takes to read one page (docs/api.md: lists and `?cursor=`). */
export interface PageWindow {
  afterId: string | undefined
  limit: number | undefined
}

/**
 * One keyset page of `query`: ordered by `column` (an id, time-ordered UUIDv7, so creation order), the rows
 * past the cursor's id in that order, and one row more than the limit, which tells the caller whether
 * another page follows (http/pagination.ts toPage). The order and the comparison come from one argument so
 * they cannot disagree: 'desc' pages with `<`, newest first.
 */
export function keysetPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  column: StringReference<DB, TB>,
  window: { afterId?: string | undefined; limit?: number | undefined },
  order: 'asc' | 'desc' = 'asc',
): SelectQueryBuilder<DB, TB, O> {
  let page = query.orderBy(sql.ref(column), order)
  if (window.afterId) {
    page = page.where(
      sql<boolean>`${sql.ref(column)} ${sql.raw(order === 'asc' ? '>' : '<')} ${window.afterId}`,
    )
  }
  return window.limit === undefined ? page : page.limit(window.limit + 1)
}
