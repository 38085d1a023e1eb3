import { INVISIBLE_CHARACTER } from '../../../http/schemas.js'

/**
 * The words a link or heading shows for a record, never empty (docs/console.md "Names on links"):
 * a name a person can read, else what the record is. A name of only spaces or of invisible characters
 * (U+200B ZERO WIDTH SPACE, U+2060 WORD JOINER, U+FEFF, bidi marks, the Hangul and Braille blanks) reads
 * as nothing, to a sighted person and to a screen reader alike, so it counts as no name. The API refuses
 * such a name (a Name's pattern, http/schemas.ts) by the same definition of invisible; a record written
 * before that rule, or a person's names (which may be empty), still meets this.
 */
const INVISIBLE = new RegExp(INVISIBLE_CHARACTER, 'gu')

/** Whether the text holds at least one character a person can see. */
export function isReadable(text: string | null | undefined): text is string {
  return typeof text === 'string' && text.replace(INVISIBLE, '') !== ''
}

/** The text when a person can read it, else the fallback (what the record is). */
export function readableOr(text: string | null | undefined, fallback: string): string {
  return isReadable(text) ? text.trim() : fallback
}

/** A person as the API shows a user or a member: names, e-mail, and (a platform user) the status. */
export interface PersonRecord {
  firstName: string
  lastName: string
  email: string
  status?: string
}

export const ERASED_PERSON = 'Erased person'
const NAMELESS_PERSON = 'Person without a name or e-mail'

/** The person's full name when it can be read, else undefined. */
export function personFullName(p: PersonRecord): string | undefined {
  const name = [p.firstName, p.lastName].filter(isReadable).join(' ')
  return isReadable(name) ? name.trim() : undefined
}

/**
 * What names a person on a link or a heading: their full name, else their e-mail, else "Erased person"
 * (an erased record keeps only its id and status), never an empty string.
 */
export function personName(p: PersonRecord): string {
  return personFullName(p) ?? personEmail(p)
}

/** The person's e-mail, else "Erased person" for an erased record (its e-mail is removed). */
export function personEmail(p: PersonRecord): string {
  if (p.status === 'erased') return ERASED_PERSON
  return readableOr(p.email, NAMELESS_PERSON)
}
