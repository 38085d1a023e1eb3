/**
 * `multipart/form-data` for the console's one upload (an identity provider's SAML metadata file): the
 * same `name → value` record the urlencoded parser gives, a file's content as UTF-8 text under its field
 * name. Small bodies only (the plugin's body limit); no dependency, no temporary files.
 */
export type FormFields = Record<string, string | string[]>

export function boundaryOf(contentType: string | undefined): string | undefined {
  const match = /boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(contentType ?? '')
  return match?.[1] ?? match?.[2]
}

export function parseMultipart(body: Buffer, boundary: string): FormFields {
  const fields: FormFields = {}
  const delimiter = Buffer.from(`--${boundary}`)
  let start = body.indexOf(delimiter)
  while (start !== -1) {
    const next = body.indexOf(delimiter, start + delimiter.length)
    if (next === -1) break
    // A part: CRLF, headers, CRLF CRLF, content, CRLF, then the next delimiter.
    const part = body.subarray(start + delimiter.length + 2, next - 2)
    const split = part.indexOf('\r\n\r\n')
    if (split !== -1) {
      const headers = part.subarray(0, split).toString('utf8')
      const name = /content-disposition:[^\r\n]*\bname="([^"]*)"/i.exec(headers)?.[1]
      if (name !== undefined) {
        const value = part.subarray(split + 4).toString('utf8')
        const seen = fields[name]
        fields[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value]
      }
    }
    start = next
  }
  return fields
}
