import { invalidFilter } from './scim-error.js'

/**
 * SCIM filters (RFC 7644 §3.4.2.2), the subset of docs/scim.md: `eq` and `pr`, joined by `and`, with
 * parentheses and one level of value filter (`emails[type eq "work"].value`, `members[value eq "…"]`).
 * Our own parser, because it must be linear and bounded: one pass over at most MAX_FILTER_LENGTH
 * characters, at most MAX_DEPTH nested groups and MAX_TERMS comparisons, so a hostile filter is a fast
 * 400 `invalidFilter` (docs/scim.md says why no library was taken).
 */

export const MAX_FILTER_LENGTH = 2048
export const MAX_DEPTH = 8
export const MAX_TERMS = 32

export type FilterValue = string | number | boolean | null

/** One comparison. `has`: a bare `attr[valueFilter]`, true when an element matches. */
export interface Comparison {
  /** The attribute, lower-cased, core-schema prefix removed: `username`, `emails`, `members`. */
  attr: string
  valueFilter?: Comparison[]
  /** The sub-attribute, lower-cased: `value`. */
  sub?: string
  op: 'eq' | 'pr' | 'has'
  value?: FilterValue
}

/** A filter: every comparison must hold (the only join offered is `and`). */
export type Filter = Comparison[]

type Token =
  | { kind: 'word'; text: string }
  | { kind: 'string'; text: string }
  | { kind: '(' | ')' | '[' | ']' }

const WORD = /[A-Za-z0-9_:$.\-+]/

function tokenize(text: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < text.length) {
    const c = text[i] as string
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++
    } else if (c === '(' || c === ')' || c === '[' || c === ']') {
      tokens.push({ kind: c })
      i++
    } else if (c === '"') {
      let out = ''
      i++
      for (;;) {
        if (i >= text.length) throw invalidFilter('A string in the filter is not closed')
        const d = text[i] as string
        if (d === '"') break
        if (d === '\\') {
          const e = text[i + 1]
          if (e === undefined) throw invalidFilter('A string in the filter ends with a backslash')
          const simple: Record<string, string> = {
            '"': '"',
            '\\': '\\',
            '/': '/',
            b: '\b',
            f: '\f',
            n: '\n',
            r: '\r',
            t: '\t',
          }
          if (e === 'u') {
            const hex = text.slice(i + 2, i + 6)
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw invalidFilter('A \\u escape in the filter is malformed')
            out += String.fromCharCode(Number.parseInt(hex, 16))
            i += 6
            continue
          }
          const mapped = simple[e]
          if (mapped === undefined) throw invalidFilter('An escape in the filter is malformed')
          out += mapped
          i += 2
          continue
        }
        out += d
        i++
      }
      i++
      tokens.push({ kind: 'string', text: out })
    } else if (WORD.test(c)) {
      const start = i
      while (i < text.length && WORD.test(text[i] as string)) i++
      tokens.push({ kind: 'word', text: text.slice(start, i) })
    } else {
      throw invalidFilter(`Unexpected character "${c}" in the filter`)
    }
  }
  return tokens
}

const CORE_PREFIXES = [
  'urn:ietf:params:scim:schemas:core:2.0:user:',
  'urn:ietf:params:scim:schemas:core:2.0:group:',
]

/** `userName`, `emails.value`, `urn:…:User:userName` → [attr, sub] lower-cased. */
function splitPath(path: string): [string, string | undefined] {
  let rest = path.toLowerCase()
  for (const prefix of CORE_PREFIXES) if (rest.startsWith(prefix)) rest = rest.slice(prefix.length)
  if (rest.startsWith('urn:')) throw invalidFilter(`The filter cannot use the attribute "${path}"`)
  const parts = rest.split('.')
  if (parts.length > 2 || parts.some((p) => p === ''))
    throw invalidFilter(`"${path}" is not an attribute path`)
  return [parts[0] as string, parts[1]]
}

class Parser {
  #pos = 0
  #terms = 0
  constructor(private readonly tokens: Token[]) {}

  parse(): Filter {
    const filter = this.#conjunction(0)
    if (this.#pos < this.tokens.length) throw invalidFilter('Unexpected text after the end of the filter')
    return filter
  }

  #peek(): Token | undefined {
    return this.tokens[this.#pos]
  }

  #keyword(token: Token | undefined): string | undefined {
    return token?.kind === 'word' ? token.text.toLowerCase() : undefined
  }

  #conjunction(depth: number): Filter {
    const out: Comparison[] = [...this.#term(depth)]
    for (;;) {
      const word = this.#keyword(this.#peek())
      if (word === 'and') {
        this.#pos++
        out.push(...this.#term(depth))
      } else if (word === 'or') {
        throw invalidFilter('"or" is not supported: only "and" joins comparisons')
      } else {
        return out
      }
    }
  }

  #term(depth: number): Comparison[] {
    const token = this.#peek()
    if (!token) throw invalidFilter('The filter ends where a comparison was expected')
    if (token.kind === '(') {
      if (depth + 1 > MAX_DEPTH) throw invalidFilter(`The filter nests deeper than ${MAX_DEPTH} levels`)
      this.#pos++
      const inner = this.#conjunction(depth + 1)
      if (this.#peek()?.kind !== ')') throw invalidFilter('A "(" in the filter is not closed')
      this.#pos++
      return inner
    }
    if (token.kind !== 'word') throw invalidFilter('An attribute name was expected in the filter')
    if (token.text.toLowerCase() === 'not') throw invalidFilter('"not" is not supported')
    this.#pos++
    if (++this.#terms > MAX_TERMS) throw invalidFilter(`The filter has more than ${MAX_TERMS} comparisons`)
    return [this.#comparison(token.text, depth)]
  }

  #comparison(path: string, depth: number): Comparison {
    const [attr, sub] = splitPath(path)
    if (this.#peek()?.kind === '[') {
      if (sub !== undefined) throw invalidFilter(`"${path}[…]" is not an attribute path`)
      if (depth + 1 > MAX_DEPTH) throw invalidFilter(`The filter nests deeper than ${MAX_DEPTH} levels`)
      this.#pos++
      const valueFilter = this.#conjunction(depth + 1)
      if (valueFilter.some((c) => c.valueFilter))
        throw invalidFilter('A value filter cannot hold another one')
      if (this.#peek()?.kind !== ']') throw invalidFilter('A "[" in the filter is not closed')
      this.#pos++
      const next = this.#peek()
      if (next?.kind === 'word' && next.text.startsWith('.')) {
        this.#pos++
        const subName = next.text.slice(1).toLowerCase()
        if (!/^[a-z$][a-z0-9_$-]*$/.test(subName)) throw invalidFilter('A sub-attribute name was expected')
        return this.#operator({ attr, valueFilter, sub: subName })
      }
      return { attr, valueFilter, op: 'has' }
    }
    return this.#operator({ attr, ...(sub !== undefined ? { sub } : {}) })
  }

  #operator(path: Omit<Comparison, 'op'>): Comparison {
    const op = this.#keyword(this.#peek())
    if (op === 'pr') {
      this.#pos++
      return { ...path, op: 'pr' }
    }
    if (op === 'eq') {
      this.#pos++
      return { ...path, op: 'eq', value: this.#value() }
    }
    if (op && ['ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'].includes(op)) {
      throw invalidFilter(`The operator "${op}" is not supported: only "eq" and "pr"`)
    }
    throw invalidFilter('An operator ("eq" or "pr") was expected in the filter')
  }

  #value(): FilterValue {
    const token = this.#peek()
    this.#pos++
    if (token?.kind === 'string') return token.text
    if (token?.kind === 'word') {
      const lower = token.text.toLowerCase()
      if (lower === 'true') return true
      if (lower === 'false') return false
      if (lower === 'null') return null
      if (/^-?\d+(\.\d+)?$/.test(token.text)) return Number(token.text)
    }
    throw invalidFilter('A value (a "string", true, false, null or a number) was expected in the filter')
  }
}

/** Parses a filter, or throws 400 invalidFilter; the text is bounded before any work is done. */
export function parseFilter(text: string): Filter {
  if (text.length > MAX_FILTER_LENGTH) {
    throw invalidFilter(`The filter is longer than ${MAX_FILTER_LENGTH} characters`)
  }
  const tokens = tokenize(text)
  if (tokens.length === 0) throw invalidFilter('The filter is empty')
  return new Parser(tokens).parse()
}

/** A comparison's path in one spelling: `username`, `emails.value`, `emails[type].value`, `members[value]`. */
export function pathKey(c: Comparison): string {
  const inner = c.valueFilter ? `[${c.valueFilter.map((v) => v.attr).join(',')}]` : ''
  return `${c.attr}${inner}${c.sub !== undefined ? `.${c.sub}` : ''}`
}

/** The values a path reaches in a subject (a plain object with lower-cased keys). */
function reach(subject: Record<string, unknown>, c: Comparison): unknown[] {
  const top = subject[c.attr]
  let values: unknown[] = top === undefined || top === null ? [] : Array.isArray(top) ? top : [top]
  if (c.valueFilter) {
    const filter = c.valueFilter
    values = values.filter(
      (v) => v && typeof v === 'object' && matches(v as Record<string, unknown>, filter, true),
    )
  }
  if (c.sub !== undefined) {
    const sub = c.sub
    values = values.map((v) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[sub] : undefined))
  }
  return values.filter((v) => v !== undefined && v !== null && v !== '')
}

function equal(actual: unknown, expected: FilterValue, caseExact: boolean): boolean {
  if (typeof actual === 'string' && typeof expected === 'string') {
    return caseExact ? actual === expected : actual.toLowerCase() === expected.toLowerCase()
  }
  return actual === expected
}

/**
 * Whether a subject passes a filter. Keys of the subject and of its elements are lower-cased attribute
 * names; `caseExact` lists the paths compared exactly (ids, externalId), the rest ignore case.
 */
export function matches(
  subject: Record<string, unknown>,
  filter: Filter,
  insideValue = false,
  caseExact: ReadonlySet<string> = new Set(),
): boolean {
  return filter.every((c) => {
    const values = reach(subject, c)
    if (c.op === 'pr' || c.op === 'has') return values.length > 0
    const exact = !insideValue && caseExact.has(pathKey(c))
    return values.some((v) => equal(v, c.value ?? null, exact))
  })
}
