import type { IncomingMessage } from 'node:http'

/** How much of an oversized body is read and thrown away before answering, and for how long at most. */
export const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024
export const DRAIN_LIMIT_MS = 10_000

/**
 * Reads the rest of a request body that will not be used, so that the 413 is answered to a client that
 * has finished sending: a connection closed while the client still writes reaches it as a reset, and it
 * never reads the answer (docs/operations.md#limits). Bounded: past DRAIN_LIMIT_BYTES or DRAIN_LIMIT_MS the connection
 * is cut, which is what a client sending that much deserves.
 */
export function drainRequestBody(raw: IncomingMessage): Promise<void> {
  if (raw.complete || raw.destroyed) return Promise.resolve()
  return new Promise((resolve) => {
    let received = 0
    const finish = () => {
      clearTimeout(timer)
      raw.off('data', onData)
      raw.off('end', finish)
      raw.off('close', finish)
      raw.off('error', finish)
      resolve()
    }
    const onData = (chunk: Buffer) => {
      received += chunk.length
      if (received > DRAIN_LIMIT_BYTES) {
        raw.socket?.destroy()
        finish()
      }
    }
    const timer = setTimeout(() => {
      raw.socket?.destroy()
      finish()
    }, DRAIN_LIMIT_MS)
    raw.on('data', onData)
    raw.once('end', finish)
    raw.once('close', finish)
    raw.once('error', finish)
    raw.resume()
  })
}
