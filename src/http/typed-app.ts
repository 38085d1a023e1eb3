import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify'
import type { ServiceContext } from '../context.js'

/** A Fastify instance whose routes infer request and reply types from their TypeBox schemas. */
export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>

/** A feature's routes: registered under /v1 with the shared service context. */
export type RouteModule = (app: TypedApp, ctx: ServiceContext) => Promise<void> | void
