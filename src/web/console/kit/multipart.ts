/**
 * `multipart/form-data` bodies of console forms (the CSV import's file upload), parsed into the same
 * field → value record the urlencoded parser gives, a file's content as UTF-8 text under its field name.
 * The body is read whole, up to the parser's body limit, so this is for small uploads only; nothing is
 * written to disk. A form with no file (JavaScript off or on) posts the same way, so one handler serves both.
 */
export function parseMultipart(body: Buffer, contentType: string): Record<string, string> | undefined {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType)
  const mark = boundary?.[1] ?? boundary?.[2]
  if (!mark) return undefined
  const delimiter = Buffer.from(`--${mark}`)
  const fields: Record<string, string> = {}
  let at = body.indexOf(delimiter)
  if (at === -1) return undefined
  for (;;) {
    at += delimiter.length
    // "--" after a delimiter closes the body.
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return fields
    const headersEnd = body.indexOf('\r\n\r\n', at)
    const next = body.indexOf(Buffer.from(`\r\n--${mark}`), headersEnd)
    if (headersEnd === -1 || next === -1) return undefined
    const headers = body.subarray(at, headersEnd).toString('utf8')
    const name = /content-disposition:[^\r\n]*;\s*name="([^"]*)"/i.exec(headers)?.[1]
    // A repeated field keeps its first value: no console form repeats a name in a multipart form.
    if (name !== undefined && !(name in fields)) {
      fields[name] = body.subarray(headersEnd + 4, next).toString('utf8')
    }
    at = next + 2
  }
}
