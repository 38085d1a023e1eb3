/**
 * The key under which tenant names are unique (docs/api.md#tenants): Unicode NFKC, case-folded, trimmed, inner
 * whitespace collapsed — "ACME", " acme " and "Ａｃｍｅ" collide. A unique index on it makes the
 * database the judge under concurrency.
 */
export function tenantNameKey(name: string): string {
  return name.normalize('NFKC').toLowerCase().trim().replace(/\s+/gu, ' ')
}

/** The name as stored and returned: the original, trimmed. */
export function displayName(name: string): string {
  return name.trim()
}
