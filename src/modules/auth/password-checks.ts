import { availableParallelism } from 'node:os'
import { decoyPasswordHash, verifyPassword } from '../../crypto/passwords.js'

/**
 * Password checks, a few at a time. An argon2id check holds 19 MiB and a CPU core while it runs; left
 * alone, a burst of logins runs one per libuv thread (4 by default) whatever the cores, which adds
 * memory and no throughput once the cores are busy, and starves the file and DNS work that shares those
 * threads (docs/performance.md, "Figures behind the code"). So at most one check per core runs; the
 * others wait their turn, in order.
 */
export class PasswordChecks {
  #running = 0
  readonly #waiting: Array<() => void> = []

  constructor(private readonly atOnce = availableParallelism()) {}

  /** Whether `password` matches `hash`; with no hash, a check against a decoy (same cost) that fails. */
  async verify(hash: string | null | undefined, password: string): Promise<boolean> {
    await this.#acquire()
    try {
      if (!hash) {
        await verifyPassword(await decoyPasswordHash(), password)
        return false
      }
      return await verifyPassword(hash, password)
    } finally {
      this.#release()
    }
  }

  async #acquire(): Promise<void> {
    if (this.#running < this.atOnce) {
      this.#running += 1
      return
    }
    // The slot is handed over by #release: #running stays as it is.
    await new Promise<void>((resolve) => this.#waiting.push(resolve))
  }

  #release(): void {
    const next = this.#waiting.shift()
    if (next) next()
    else this.#running -= 1
  }
}
