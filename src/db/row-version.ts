import { type RawBuilder, sql } from 'kysely'
import type { Database } from './schema.js'

/**
 * A row's version is its `updated` instant: the ETag of its representation names it (http/etag.ts) and a
 * PUT's If-Match is checked against it in the UPDATE itself (`… AND updated = <instant>`). For that to
 * hold, every write of such a row moves `updated` on, even when two writes share a clock reading (or the
 * test clock stands still): the value a write stores is its own instant or 1 ms past the stored one,
 * whichever is later. Milliseconds, because that is what the representation (and so the ETag) carries.
 */

/** The tables whose rows carry that version. */
export type VersionedTable = {
  [T in keyof Database]: Database[T] extends { updated: unknown } ? T : never
}[keyof Database]

/** The `updated` of an UPDATE's SET: `at`, or the stored instant plus 1 ms when that is later. */
export function nextUpdated(at: Date): RawBuilder<Date> {
  return sql<Date>`greatest(${at}::timestamptz, updated + interval '1 millisecond')`
}
