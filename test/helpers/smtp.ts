import { SMTPServer } from 'smtp-server'

/**
 * A real SMTP server in the test process (smtp-server), on a port of its own: mail the service sends
 * arrives here over TCP, as it would at a mail relay. Messages are decoded far enough to read what a
 * recipient reads: the envelope, the headers, and the text and HTML parts.
 */
export interface ReceivedMail {
  envelopeFrom: string
  envelopeTo: string[]
  headers: Record<string, string>
  subject: string
  text: string
  html: string
  raw: string
}

export interface TestSmtpServer {
  port: number
  url: string
  messages: ReceivedMail[]
  /** Messages whose data has arrived, answered or not (with `delayMs`: the ones a client has in hand). */
  readonly dataReceived: number
  /** Resolves once `count` messages have arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>
  /** The messages addressed to `email` (envelope), once there are `count` of them. */
  waitForMailTo(email: string, count: number, timeoutMs?: number): Promise<ReceivedMail[]>
  close(): Promise<void>
}

export interface SmtpServerOptions {
  /** Listen here instead of on a fresh port (a server that "comes back up"). */
  port?: number
  /** Answer each message this late (a slow relay). */
  delayMs?: number
  /** Refuse every recipient with 550, as for a mailbox that does not exist. */
  rejectRecipients?: boolean
}

export async function startSmtpServer(options: SmtpServerOptions = {}): Promise<TestSmtpServer> {
  const messages: ReceivedMail[] = []
  let dataReceived = 0
  const server = new SMTPServer({
    authOptional: true,
    // Plain SMTP on loopback: the test server has no certificate a client would trust.
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (!options.rejectRecipients) return callback()
      const error = new Error(`No such mailbox: ${address.address}`) as Error & { responseCode: number }
      error.responseCode = 550
      return callback(error)
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        dataReceived += 1
        const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : ''
        const envelopeTo = session.envelope.rcptTo.map((r) => r.address)
        const finish = () => {
          messages.push({ envelopeFrom, envelopeTo, raw, ...parseMessage(raw) })
          callback()
        }
        if (options.delayMs) setTimeout(finish, options.delayMs)
        else finish()
      })
    },
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve())
  })
  const address = server.server.address()
  if (typeof address !== 'object' || !address) throw new Error('SMTP server has no address')
  const until = async (select: () => ReceivedMail[], count: number, timeoutMs: number, what: string) => {
    const deadline = Date.now() + timeoutMs
    while (select().length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} mail(s) ${what}, got ${select().length}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    return select()
  }
  return {
    port: address.port,
    url: `smtp://127.0.0.1:${address.port}`,
    messages,
    get dataReceived() {
      return dataReceived
    },
    waitFor: (count, timeoutMs = 20_000) => until(() => messages, count, timeoutMs, 'at the SMTP server'),
    waitForMailTo: (email, count, timeoutMs = 20_000) =>
      until(() => messages.filter((m) => m.envelopeTo.includes(email)), count, timeoutMs, `to ${email}`),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

interface Part {
  headers: Record<string, string>
  body: string
}

function splitPart(raw: string): Part {
  const index = raw.search(/\r?\n\r?\n/)
  const head = index < 0 ? raw : raw.slice(0, index)
  const body = index < 0 ? '' : raw.slice(index).replace(/^\r?\n\r?\n/, '')
  const headers: Record<string, string> = {}
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { headers, body }
}

function decodeBody(part: Part): string {
  const encoding = (part.headers['content-transfer-encoding'] ?? '7bit').toLowerCase()
  if (encoding === 'base64') return Buffer.from(part.body.replace(/\s+/g, ''), 'base64').toString('utf8')
  if (encoding === 'quoted-printable') {
    const soft = part.body.replace(/=\r?\n/g, '')
    const bytes: number[] = []
    for (let i = 0; i < soft.length; i++) {
      if (soft[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
        bytes.push(Number.parseInt(soft.slice(i + 1, i + 3), 16))
        i += 2
      } else {
        bytes.push(...Buffer.from(soft[i]!, 'utf8'))
      }
    }
    return Buffer.from(bytes).toString('utf8')
  }
  return part.body
}

/** RFC 2047 encoded words (=?UTF-8?Q?…?= / =?UTF-8?B?…?=) in a header. */
function decodeHeader(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_match, _charset, kind: string, text: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : decodeBody({
            headers: { 'content-transfer-encoding': 'quoted-printable' },
            body: text.replace(/_/g, ' '),
          }),
    )
}

function collect(part: Part, out: { text: string; html: string }): void {
  const type = part.headers['content-type'] ?? 'text/plain'
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1]
  if (/^multipart\//i.test(type) && boundary) {
    const sections = part.body.split(`--${boundary}`).slice(1)
    for (const section of sections) {
      if (section.startsWith('--')) break
      collect(splitPart(section.replace(/^\r?\n/, '')), out)
    }
    return
  }
  if (/^text\/html/i.test(type)) out.html += decodeBody(part)
  else if (/^text\/plain/i.test(type)) out.text += decodeBody(part)
}

function parseMessage(raw: string): Pick<ReceivedMail, 'headers' | 'subject' | 'text' | 'html'> {
  const message = splitPart(raw)
  const out = { text: '', html: '' }
  collect(message, out)
  return { headers: message.headers, subject: decodeHeader(message.headers.subject ?? ''), ...out }
}

/** The invitation link in a mail's text part, and its token. */
export function invitationLinkIn(mail: ReceivedMail): { link: URL; token: string } {
  const match = /https?:\/\/\S+\/invitations\/accept\?token=[A-Za-z0-9_%-]+/.exec(mail.text)
  if (!match) throw new Error(`no invitation link in the mail:\n${mail.text}`)
  const link = new URL(match[0])
  return { link, token: link.searchParams.get('token') ?? '' }
}

/** The password-reset token in a mail's text part (the service's own page link). */
export function resetTokenIn(mail: ReceivedMail): string {
  const match = /https?:\/\/\S+\/password-reset\?token=([A-Za-z0-9_%-]+)/.exec(mail.text)
  if (!match?.[1]) throw new Error(`no reset link in the mail:\n${mail.text}`)
  return decodeURIComponent(match[1])
}
