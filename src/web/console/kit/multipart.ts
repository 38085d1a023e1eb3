import { Busboy, type BusboyHeaders } from '@fastify/busboy'
import type { FastifyRequest } from 'fastify'
import { AppError } from '../../../errors.js'

type Done = (error: Error | null, body?: unknown) => void

/**
 * The content-type parser of `multipart/form-data` console forms (the CSV import's file upload): the body
 * becomes the same field → value record the urlencoded parser gives, a file's content as UTF-8 text under
 * its field name. Parsed by @fastify/busboy (the streaming parser @fastify/multipart is built on) rather
 * than by hand; nothing is written to disk, and the whole body is bounded by `limit` bytes — a larger one
 * answers 413 instead of being cut short.
 */
export function multipartFormParser(limit: number) {
  return (request: FastifyRequest, payload: NodeJS.ReadableStream, done: Done): void => {
    const invalid = (why: string) =>
      new AppError('validation_failed', `The form body is not valid multipart/form-data: ${why}`)
    let parser: ReturnType<typeof Busboy>
    try {
      parser = Busboy({
        headers: request.headers as BusboyHeaders,
        limits: { files: 1, fileSize: limit, fields: 50, fieldSize: limit, parts: 51 },
      })
    } catch (error) {
      done(invalid(error instanceof Error ? error.message : 'no boundary'))
      return
    }
    const fields: Record<string, string> = {}
    let tooLarge = false
    let finished = false
    const finish = (error: Error | null) => {
      if (finished) return
      finished = true
      done(error, error ? undefined : fields)
    }
    // A repeated field keeps its first value: no console form repeats a name in a multipart form.
    const keep = (name: string, value: string) => {
      if (!(name in fields)) fields[name] = value
    }
    parser.on('field', (name, value, _nameTruncated, valueTruncated) => {
      if (valueTruncated) tooLarge = true
      else keep(name, value)
    })
    parser.on('file', (name, stream) => {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('limit', () => {
        tooLarge = true
      })
      stream.on('end', () => keep(name, Buffer.concat(chunks).toString('utf8')))
    })
    parser.on('finish', () =>
      finish(tooLarge ? new AppError('payload_too_large', `A form part is over ${limit} bytes`) : null),
    )
    parser.on('error', (error) => finish(invalid(error instanceof Error ? error.message : 'unreadable')))
    payload.on('error', (error) => finish(error as Error))
    let received = 0
    payload.on('data', (chunk: Buffer) => {
      received += chunk.length
      if (received <= limit) return
      payload.unpipe(parser)
      finish(new AppError('payload_too_large', `The form body is over ${limit} bytes`))
    })
    payload.pipe(parser)
  }
}
