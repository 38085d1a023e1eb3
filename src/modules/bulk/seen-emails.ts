/**
 * The e-mails a dry run has seen so far, in bounded memory. A dry run writes nothing, so the database
 * cannot tell it that a row repeats an earlier row of the same request: it must remember every e-mail
 * it has passed (the first occurrence wins, as in a real load). A Map of the e-mails would cost ~100
 * bytes a row; this keeps a 64-bit fingerprint and the row's index instead — 12 bytes a slot, at most
 * half the slots used, so 24 MiB for MAX_DRY_RUN_ROWS rows — and a dry run stops at that many rows.
 *
 * Two different e-mails with the same 64-bit fingerprint would be reported as a repeat; among a
 * million e-mails the chance that any two do is about 3 in 100 million.
 */
export const MAX_DRY_RUN_ROWS = 1_000_000

const EMPTY = -1
const INITIAL_SLOTS = 1 << 12

export class SeenEmails {
  #slots = INITIAL_SLOTS
  /** Two 32-bit hashes per slot. */
  #hashes = new Uint32Array(INITIAL_SLOTS * 2)
  /** The row index per slot, EMPTY when free. */
  #indexes = new Int32Array(INITIAL_SLOTS).fill(EMPTY)
  #size = 0

  get size(): number {
    return this.#size
  }

  /**
   * The index of the earlier row with this e-mail, if one was seen; otherwise remembers this row as
   * the e-mail's first and returns undefined.
   */
  claim(email: string, index: number): number | undefined {
    let h1 = 0x811c9dc5
    let h2 = 0x9747b28c
    for (let i = 0; i < email.length; i++) {
      const c = email.charCodeAt(i)
      h1 = Math.imul(h1 ^ c, 0x01000193)
      h2 = Math.imul(h2 ^ c, 0x5bd1e995)
      h2 ^= h2 >>> 15
    }
    h1 >>>= 0
    h2 = (h2 ^ (h2 >>> 13)) >>> 0
    const found = this.#find(h1, h2)
    if (this.#indexes[found] !== EMPTY) return this.#indexes[found]
    this.#put(found, h1, h2, index)
    if (this.#size * 2 > this.#slots) this.#grow()
    return undefined
  }

  #find(h1: number, h2: number): number {
    const mask = this.#slots - 1
    let slot = h1 & mask
    for (;;) {
      if (this.#indexes[slot] === EMPTY) return slot
      if (this.#hashes[slot * 2] === h1 && this.#hashes[slot * 2 + 1] === h2) return slot
      slot = (slot + 1) & mask
    }
  }

  #put(slot: number, h1: number, h2: number, index: number): void {
    this.#hashes[slot * 2] = h1
    this.#hashes[slot * 2 + 1] = h2
    this.#indexes[slot] = index
    this.#size += 1
  }

  #grow(): void {
    const hashes = this.#hashes
    const indexes = this.#indexes
    const slots = this.#slots
    this.#slots = slots * 2
    this.#hashes = new Uint32Array(this.#slots * 2)
    this.#indexes = new Int32Array(this.#slots).fill(EMPTY)
    this.#size = 0
    for (let slot = 0; slot < slots; slot++) {
      const index = indexes[slot]!
      if (index === EMPTY) continue
      const h1 = hashes[slot * 2]!
      const h2 = hashes[slot * 2 + 1]!
      this.#put(this.#find(h1, h2), h1, h2, index)
    }
  }
}
