import nodemailer, { type Transporter } from 'nodemailer'
import type { Logger } from 'pino'

/** One outgoing message. */
export interface OutgoingMail {
  to: string
  subject: string
  text: string
  html: string
}

/** Where mail goes: an SMTP server, or — with none configured — the log, where a person can read it. */
export interface Mailer {
  readonly kind: 'smtp' | 'log'
  send(mail: OutgoingMail): Promise<void>
  close(): Promise<void>
}

/** A failure that another attempt will not fix (the server answered 5xx: no such mailbox, refused). */
export class PermanentMailError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PermanentMailError'
  }
}

export interface MailerOptions {
  smtpUrl: string | undefined
  from: string
  logger: Pick<Logger, 'info'>
}

export function createMailer(options: MailerOptions): Mailer {
  return options.smtpUrl ? new SmtpMailer(options.smtpUrl, options.from) : new LogMailer(options.logger)
}

/**
 * SMTP through nodemailer with a connection pool (docs/performance.md#figures-behind-the-code: without `pool` thousands of concurrent sends
 * time out). Timeouts are bounded so that a send always ends well inside the worker's lease on the row.
 */
export class SmtpMailer implements Mailer {
  readonly kind = 'smtp'
  readonly #transport: Transporter

  constructor(
    url: string,
    private readonly from: string,
  ) {
    this.#transport = nodemailer.createTransport({
      url,
      pool: true,
      maxConnections: 5,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    } as Parameters<typeof nodemailer.createTransport>[0])
  }

  async send(mail: OutgoingMail): Promise<void> {
    try {
      await this.#transport.sendMail({ from: this.from, ...mail })
    } catch (error) {
      const responseCode = (error as { responseCode?: unknown }).responseCode
      const message = error instanceof Error ? error.message : String(error)
      if (typeof responseCode === 'number' && responseCode >= 500 && responseCode < 600) {
        throw new PermanentMailError(message)
      }
      throw error
    }
  }

  async close(): Promise<void> {
    this.#transport.close()
  }
}

/**
 * No SMTP server configured: the mail, link included, is written to the log at info level — how a person
 * trying the service follows an invitation. Nothing else is logged with the token in it.
 */
export class LogMailer implements Mailer {
  readonly kind = 'log'
  constructor(private readonly logger: Pick<Logger, 'info'>) {}

  async send(mail: OutgoingMail): Promise<void> {
    this.logger.info(
      { mail: { to: mail.to, subject: mail.subject, links: mail.text.match(/https?:\/\/\S+/g) ?? [] } },
      `E-mail to ${mail.to} (no SMTP server configured: set TENANTRY_SMTP_URL to send it)\n` +
        `Subject: ${mail.subject}\n\n${mail.text}`,
    )
  }

  async close(): Promise<void> {}
}
