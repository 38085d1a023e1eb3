import { describe, expect, it } from 'vitest'
import { StatementBatcher } from '../../src/db/statement-batcher.js'

/**
 * Group commit (db/statement-batcher.ts), with a stand-in for the database: each call of `write` is one
 * statement, held open until the test lets it finish.
 */
interface Write {
  id: number
  shape?: string
  key?: string
  fails?: boolean
}

function harness(options: { maxBatch?: number; maxInFlight?: number } = {}) {
  const statements: { writes: Write[]; finish: () => void }[] = []
  const sizes: number[] = []
  const batcher = new StatementBatcher<Write, string>(
    (writes) =>
      new Promise((resolve, reject) => {
        statements.push({
          writes: [...writes],
          finish: () =>
            writes.some((w) => w.fails)
              ? reject(new Error(`failed: ${writes.map((w) => w.id).join(',')}`))
              : resolve(writes.map((w) => `done ${w.id}`)),
        })
      }),
    {
      shapeOf: (w) => w.shape ?? 'a',
      conflictKey: (w) => w.key ?? String(w.id),
      maxBatch: options.maxBatch ?? 4,
      maxInFlight: options.maxInFlight ?? 1,
      onBatch: (size) => sizes.push(size),
    },
  )
  /** Lets every statement running now finish, and waits for what that sets off. */
  const finishRunning = async () => {
    for (const statement of statements.splice(0)) statement.finish()
    await new Promise((resolve) => setTimeout(resolve, 0))
  }
  return { batcher, statements, sizes, finishRunning }
}

const ids = (writes: Write[]) => writes.map((w) => w.id)

describe('statement batcher', () => {
  it('sends a write at once while a statement is free, so an unhurried request waits for nothing', async () => {
    const { batcher, statements, finishRunning } = harness({ maxInFlight: 2 })
    const first = batcher.run({ id: 1 })
    const second = batcher.run({ id: 2 })
    expect(statements.map((s) => ids(s.writes))).toEqual([[1], [2]])
    await finishRunning()
    expect(await Promise.all([first, second])).toEqual(['done 1', 'done 2'])
  })

  it('writes what arrived meanwhile together, in order, up to maxBatch, each answered with its own result', async () => {
    const { batcher, statements, sizes, finishRunning } = harness({ maxBatch: 3 })
    const results = [1, 2, 3, 4, 5, 6].map((id) => batcher.run({ id }))
    expect(statements.map((s) => ids(s.writes))).toEqual([[1]])
    await finishRunning()
    expect(statements.map((s) => ids(s.writes))).toEqual([[2, 3, 4]])
    await finishRunning()
    expect(statements.map((s) => ids(s.writes))).toEqual([[5, 6]])
    await finishRunning()
    expect(await Promise.all(results)).toEqual([1, 2, 3, 4, 5, 6].map((id) => `done ${id}`))
    expect(sizes).toEqual([1, 3, 2])
  })

  it('never puts two shapes, or two writes with one conflict key, in one statement', async () => {
    const { batcher, statements, finishRunning } = harness({ maxInFlight: 1 })
    const results = [
      batcher.run({ id: 1 }),
      batcher.run({ id: 2, key: 'x' }),
      batcher.run({ id: 3, shape: 'b' }),
      batcher.run({ id: 4, key: 'x' }),
      batcher.run({ id: 5 }),
      batcher.run({ id: 6, shape: 'b' }),
    ]
    const seen: number[][] = []
    while (statements.length > 0) {
      seen.push(...statements.map((s) => ids(s.writes)))
      await finishRunning()
    }
    // 2 and 4 share the key x, 3 and 6 the shape b: each statement keeps to one shape and distinct keys.
    expect(seen).toEqual([[1], [2, 5], [3, 6], [4]])
    expect(await Promise.all(results)).toHaveLength(6)
  })

  it('holds a write back while a statement with its conflict key runs, and sends the others past it', async () => {
    const { batcher, statements, finishRunning } = harness({ maxInFlight: 3 })
    const results = [
      batcher.run({ id: 1, key: 'x' }),
      batcher.run({ id: 2, key: 'x' }),
      batcher.run({ id: 3 }),
    ]
    // 2 would only wait for 1's row locks (and fail 1's statement were it first): it waits for 1 to end.
    expect(statements.map((s) => ids(s.writes))).toEqual([[1], [3]])
    await finishRunning()
    expect(statements.map((s) => ids(s.writes))).toEqual([[2]])
    await finishRunning()
    expect(await Promise.all(results)).toEqual(['done 1', 'done 2', 'done 3'])
  })

  it('runs each write of a failed statement again alone: only the failing one fails', async () => {
    const { batcher, statements, sizes, finishRunning } = harness()
    const first = batcher.run({ id: 1 })
    const others = [2, 3, 4].map((id) => batcher.run({ id, fails: id === 3 }))
    const settled = Promise.allSettled(others)
    await finishRunning() // 1 alone
    await finishRunning() // 2, 3, 4 together: fails
    for (let i = 0; i < 3; i++) await finishRunning() // each again alone, one after the other
    expect(await first).toBe('done 1')
    const outcomes = await settled
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe('failed: 3')
    expect(sizes).toEqual([1, 3, 1, 1, 1])
    expect(statements).toHaveLength(0)
  })
})
