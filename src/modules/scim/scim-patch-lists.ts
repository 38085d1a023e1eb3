import type { Stored } from './scim-values.js'

/**
 * The values of multi-valued attributes while a PATCH adds and removes them by value (scim-patch.ts):
 * `add` skips a value the list holds already, and `remove members` with a value list removes those values
 * (docs/scim.md, "What is supported"). Each value is keyed once and looked up in a map, so a PATCH costs
 * time linear in the values it sends and the values the list holds: a scan of the list per value made a
 * group of 10,000 members and a body of 20,000 values some 200 million comparisons on the event loop
 * (issue 37). A list stays open across the operations that add or remove by value, and is written back to
 * its resource when another operation touches that attribute and when the PATCH ends.
 */

/** What two values compare as: the `value` sub-attribute ignoring case when a string, else the whole value. */
export function valueKey(value: unknown): string {
  const inner = (value as Stored | null | undefined)?.value
  return typeof inner === 'string' ? `v:${inner.toLowerCase()}` : `j:${JSON.stringify(value)}`
}

/** The values, each once (by valueKey), in their order: what a `replace` of a multi-valued attribute stores. */
export function distinct(values: readonly Stored[]): Stored[] {
  const seen = new Set<string>()
  return values.filter((value) => {
    const key = valueKey(value)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

interface Entry {
  value: Stored
  gone: boolean
}

/** One attribute's values in their order, with the entries of each key. */
class KeyedList {
  readonly #entries: Entry[] = []
  readonly #byKey = new Map<string, Entry[]>()

  constructor(values: readonly Stored[]) {
    for (const value of values) this.#push(value, valueKey(value))
  }

  /** Appends the value unless one with its key is there (the list's own duplicates are left as they are). */
  add(value: Stored): void {
    const key = valueKey(value)
    if (!this.#byKey.has(key)) this.#push(value, key)
  }

  /** Removes every value with the key of `value`. */
  remove(value: unknown): void {
    const key = valueKey(value)
    for (const entry of this.#byKey.get(key) ?? []) entry.gone = true
    this.#byKey.delete(key)
  }

  values(): Stored[] {
    return this.#entries.filter((entry) => !entry.gone).map((entry) => entry.value)
  }

  #push(value: Stored, key: string): void {
    const entry = { value, gone: false }
    this.#entries.push(entry)
    const same = this.#byKey.get(key)
    if (same) same.push(entry)
    else this.#byKey.set(key, [entry])
  }
}

/** The lists one PATCH has open, by the object that holds the attribute and the attribute's name. */
export class OpenLists {
  readonly #open = new Map<Stored, Map<string, KeyedList>>()

  /** `holder[name]`'s values, opened from the resource the first time. */
  of(holder: Stored, name: string): KeyedList {
    let lists = this.#open.get(holder)
    if (!lists) {
      lists = new Map()
      this.#open.set(holder, lists)
    }
    let list = lists.get(name)
    if (!list) {
      list = new KeyedList((holder[name] as Stored[] | undefined) ?? [])
      lists.set(name, list)
    }
    return list
  }

  /** Writes `holder[name]` back when open: before another operation reads or replaces it. */
  close(holder: Stored, name: string): void {
    const list = this.#open.get(holder)?.get(name)
    if (!list) return
    this.#open.get(holder)?.delete(name)
    writeBack(holder, name, list)
  }

  /** Writes every open list back: the PATCH's operations are all applied. */
  closeAll(): void {
    for (const [holder, lists] of this.#open) for (const [name, list] of lists) writeBack(holder, name, list)
    this.#open.clear()
  }
}

/** An attribute left without values is removed, as a `remove` of its last value leaves it. */
function writeBack(holder: Stored, name: string, list: KeyedList): void {
  const values = list.values()
  if (values.length > 0) holder[name] = values
  else delete holder[name]
}
