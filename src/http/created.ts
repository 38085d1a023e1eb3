import type { FastifyReply } from 'fastify'

/**
 * The answer of a create (docs/api.md: "Create → 201 with `Location`"): 201, `Location` naming the new
 * record under /v1, and the record in the envelope. A record that carries its secret, shown this once
 * (an API key, a webhook's signing secret), is marked `no-store` so no cache keeps it.
 */
export function created<Result>(
  reply: FastifyReply,
  location: string,
  result: Result,
  options: { secret?: boolean } = {},
): FastifyReply {
  reply.code(201).header('location', location)
  if (options.secret) reply.header('cache-control', 'no-store')
  return reply.send({ result })
}
