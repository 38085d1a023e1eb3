/**
 * `%text%` for LIKE / ILIKE: a contains-match whose own wildcards (`%`, `_`) and escape (`\`) are taken
 * literally, so a search for "50%" finds "50%" and not everything after "50".
 */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}
