import { Type } from 'typebox'
import { CreateUserBody } from '../users/users.schemas.js'
import {
  BulkAbortLine,
  BulkResponse,
  BulkResultLine,
  BulkSummaryLine,
  BulkUserItem,
  DryRun,
  MAX_BULK_ITEMS,
} from './bulk.schemas.js'

/**
 * The two bulk forms of `POST /v1/users` (docs/api.md#bulk-load-of-platform-users) in the OpenAPI document. The route validates its
 * body against the single-user schema — a bulk body is taken over by a preValidation hook before that,
 * and each row is validated on its own — so Fastify's generated document shows only the single form.
 * This adds the JSON array and NDJSON bodies, their answers and `?dryRun`, from the same schemas the
 * loader validates and serializes with.
 */
interface OpenApiDocument {
  paths?: Record<string, Record<string, OpenApiOperation | undefined> | undefined>
}

interface OpenApiOperation {
  description?: string
  parameters?: unknown[]
  requestBody?: { content?: Record<string, { schema?: unknown; example?: unknown; examples?: unknown }> }
  responses?: Record<string, unknown>
}

const examplesOf = (schema: object) => (schema as { examples?: unknown[] }).examples ?? []

export function documentBulkForms<T extends object>(document: T): T {
  const operation = (document as OpenApiDocument).paths?.['/v1/users']?.post
  if (!operation) return document
  const single = operation.requestBody?.content?.['application/json']?.schema ?? BulkUserItem
  operation.description = [
    operation.description,
    `A JSON array of up to ${MAX_BULK_ITEMS} users (each with an optional tenant membership) is a bulk ` +
      'load: 200 with one result per item, in input order; one bad item never fails the others. With ' +
      'Content-Type application/x-ndjson, any number of users stream in, one JSON object a line, and the ' +
      'answer streams back one line per input line, then a summary line. ?dryRun=true writes nothing.',
  ]
    .filter(Boolean)
    .join('\n\n')
  operation.requestBody = {
    ...operation.requestBody,
    content: {
      'application/json': {
        schema: Type.Union([
          single as ReturnType<typeof Type.Object>,
          Type.Array(BulkUserItem, { maxItems: MAX_BULK_ITEMS }),
        ]),
        examples: {
          one: { summary: 'One user', value: examplesOf(CreateUserBody)[0] },
          bulk: { summary: 'A bulk load (JSON array)', value: examplesOf(BulkUserItem) },
        },
      },
      'application/x-ndjson': {
        schema: BulkUserItem,
        example: examplesOf(BulkUserItem)[0], // one line of the stream
      },
    },
  }
  operation.parameters = [
    ...(operation.parameters ?? []),
    {
      name: 'dryRun',
      in: 'query',
      required: false,
      description: 'Bulk forms only: validate every row (e-mail collisions included) and write nothing',
      schema: DryRun,
    },
  ]
  operation.responses = {
    ...operation.responses,
    '200': {
      description: 'A bulk load: every row’s own result, and a summary',
      content: {
        'application/json': { schema: BulkResponse },
        'application/x-ndjson': {
          schema: Type.Union([BulkResultLine, BulkSummaryLine, BulkAbortLine]),
        },
      },
    },
  }
  return document
}
