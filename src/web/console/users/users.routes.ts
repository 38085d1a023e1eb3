import type { FastifyInstance } from 'fastify'
import type { ConsolePages } from '../kit/pages.js'

export function userRoutes(_router: FastifyInstance, _pages: ConsolePages): void {}
