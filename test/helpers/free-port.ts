import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A loopback port nobody holds now: for a server whose own URL must be known before it starts. */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
