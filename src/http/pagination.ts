import { type TSchema, Type } from 'typebox'
import type { Actor } from '../access/actor.js'
import type { ServiceContext } from '../context.js'
import type { PageWindow } from '../db/keyset.js'
import { invalidField } from '../errors.js'

/**
 * Keyset pagination (docs/api.md#conventions): lists return everything unless `?limit=N`; then the response gains
 * `nextCursor`, an opaque token for `?cursor=`. Rows are ordered by id — time-ordered UUIDs, so creation
 * order — and the cursor is the last id seen.
 */
export interface PageRequest {
  limit?: number | undefined
  cursor?: string | undefined
}

export interface Page<T> {
  items: T[]
  nextCursor: string | undefined
}

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined
  const id = Buffer.from(cursor, 'base64url').toString('utf8')
  if (!/^[0-9a-f-]{36}$/i.test(id)) throw invalidField('cursor', 'is not a cursor from this list')
  return id
}

function encodeCursor(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url')
}

/** Given up to limit+1 rows fetched after the cursor, the page and the next cursor. */
export function toPage<T>(rows: T[], limit: number | undefined, idOf: (row: T) => string): Page<T> {
  if (limit === undefined || rows.length <= limit) return { items: rows, nextCursor: undefined }
  const items = rows.slice(0, limit)
  const last = items[items.length - 1]
  return { items, nextCursor: last === undefined ? undefined : encodeCursor(idOf(last)) }
}

/**
 * One page of a list: decodes the cursor, reads up to limit+1 rows through `read`, and maps the rows
 * kept to API records. Every list endpoint pages through this.
 */
export async function readPage<Row, Item>(
  request: PageRequest,
  read: (window: PageWindow) => Promise<Row[]>,
  idOf: (row: Row) => string,
  toItem: (row: Row) => Item,
): Promise<Page<Item>> {
  const rows = await read({ afterId: decodeCursor(request.cursor), limit: request.limit })
  const page = toPage(rows, request.limit, idOf)
  return { items: page.items.map(toItem), nextCursor: page.nextCursor }
}

/** The one page body of every list route (docs/api.md#conventions): `{result: [...], nextCursor?}`. */
export const PageBody = <T extends TSchema>(item: T) =>
  Type.Object({
    result: Type.Array(item),
    nextCursor: Type.Optional(
      Type.String({ description: 'Present when more rows follow: pass it as `?cursor=` for the next page.' }),
    ),
  })

/** A page as its response body: `nextCursor` only when more rows follow. */
export function pageBody<T>(page: Page<T>): { result: T[]; nextCursor?: string } {
  return page.nextCursor === undefined
    ? { result: page.items }
    : { result: page.items, nextCursor: page.nextCursor }
}

/**
 * The handler of a list of what the caller can see (GET /v1/tenants, GET /v1/users): `list`'s keyset page
 * for the caller and the query, as the page body. A tenant's records: http/tenant-record-answers.ts.
 */
export function answerVisibleList<Query, Item>(
  ctx: ServiceContext,
  list: (ctx: ServiceContext, actor: Actor, query: Query) => Promise<Page<Item>>,
) {
  return async (request: { actor: Actor; query: Query }) =>
    pageBody(await list(ctx, request.actor, request.query))
}
