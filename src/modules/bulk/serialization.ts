import type { TSchema } from 'typebox'

type Json = { [key: string]: unknown }

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean'])

/**
 * The same response schema for the serializer, with each nullable scalar (`anyOf: [X, null]`, how
 * TypeBox spells Nullable) written as `type: [X, 'null']`. The fields — the allow-list — are unchanged;
 * the serializer just stops trying each branch of the union per value, which matters at a hundred
 * thousand answers a request.
 */
export function withNullableScalars<T extends TSchema>(schema: T): T {
  return rewrite(schema) as T
}

function rewrite(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewrite)
  if (node === null || typeof node !== 'object') return node
  const out: Json = {}
  for (const [key, value] of Object.entries(node)) out[key] = rewrite(value)
  const branches = out.anyOf
  if (!Array.isArray(branches) || branches.length !== 2) return out
  const nullBranch = branches.find((b: Json) => b.type === 'null')
  const other = branches.find((b: Json) => b !== nullBranch) as Json | undefined
  if (!nullBranch || !other || typeof other.type !== 'string' || !SCALAR_TYPES.has(other.type)) return out
  const { anyOf: _anyOf, ...rest } = out
  return { ...rest, ...other, type: [other.type, 'null'] }
}
