import type { paths } from '../../../../generated/openapi.js'
import { html, SafeHtml } from '../../../html.js'
import { type Errors, errorSummary, textField } from '../../kit/forms.js'
import { table } from '../../kit/tables.js'
import type { FormToken } from '../kit/form-token.js'
import { actionButton, formTokenFields } from '../kit/forms.js'
import { timeOf } from '../kit/time.js'

/** One of the person's sessions as `GET /v1/me/sessions` lists it. */
export type Session =
  paths['/v1/me/sessions']['get']['responses'][200]['content']['application/json']['result'][number]

/** One of the person's factors as `GET /v1/me/factors` lists it (recovery codes: how many are left). */
export interface Factor {
  id: string
  type: string
  name: string
  created: string
  lastUsed?: string | null | undefined
}

/** How many recovery codes are left, and of how many; undefined when the person has none. */
export interface RecoveryCodes {
  remaining: number
  total?: number | undefined
}

export const SECURITY_LABELS = { name: 'Name', code: 'Code' }

/** How a sign-in was won, in words (a token's `amr`, docs/security.md). */
const METHODS: Record<string, string> = {
  pwd: 'password',
  sso: 'single sign-on',
  otp: 'authenticator app',
  hwk: 'security key',
  swk: 'passkey',
  rec: 'recovery code',
}

const FACTOR_TYPES: Record<string, string> = { totp: 'Authenticator app', webauthn: 'Passkey' }

/** The notices of `?done=` after a change on the page. */
export const SECURITY_NOTICES: Record<string, string> = {
  'app-added': 'The authenticator app was added. Signing in now asks for its code after your password.',
  'passkey-added': 'The passkey was added.',
  removed: 'The factor was removed.',
  'signed-out': 'That session is signed out.',
  'others-signed-out': 'Every other session is signed out. This one stays signed in.',
}

/**
 * "Chrome on Linux" from a User-Agent: enough for a person to recognise their own sign-ins; the whole
 * string stays in the cell's title.
 */
export function browserOf(userAgent: string | null): string {
  if (!userAgent) return 'Unknown'
  const browser = /Edg\//.test(userAgent)
    ? 'Edge'
    : /Firefox\//.test(userAgent)
      ? 'Firefox'
      : /Chrom(e|ium)\//.test(userAgent)
        ? 'Chrome'
        : /Safari\//.test(userAgent)
          ? 'Safari'
          : /curl\//.test(userAgent)
            ? 'curl'
            : undefined
  const system = /Android/.test(userAgent)
    ? 'Android'
    : /iPhone|iPad/.test(userAgent)
      ? 'iOS'
      : /Windows/.test(userAgent)
        ? 'Windows'
        : /Mac OS X/.test(userAgent)
          ? 'macOS'
          : /Linux/.test(userAgent)
            ? 'Linux'
            : undefined
  if (browser && system) return `${browser} on ${system}`
  return browser ?? system ?? (userAgent.length > 40 ? `${userAgent.slice(0, 40)}…` : userAgent)
}

export function securityBody(o: {
  email: string
  factors: Factor[]
  recovery: RecoveryCodes | undefined
  sessions: Session[]
  /** A Platform Administrator: the platform's own setting is linked from here. */
  platformAdministrator?: boolean
  form: () => FormToken
  notice?: string | undefined
  errors?: Errors | undefined
}): SafeHtml {
  const hasFactor = o.factors.length > 0
  const otherSessions = o.sessions.filter((s) => !s.current).length
  return html`${errorSummary(o.errors, SECURITY_LABELS)}<h1>Security</h1>
${o.notice ? html`<div class="notice success" role="status"><p>${o.notice}</p></div>` : ''}
<p>How you, <strong>${o.email}</strong>, sign in to the console and the API, and where you are signed in.</p>

<h2 id="factors">Second factors</h2>
${
  hasFactor
    ? html`<p>After your password, signing in asks for one of these.</p>
${table(
  'Your second factors',
  ['Name', 'Type', 'Added', 'Last used', { label: 'Actions', hidden: true }],
  o.factors,
  (f) => [
    f.name || (FACTOR_TYPES[f.type] ?? f.type),
    FACTOR_TYPES[f.type] ?? f.type,
    timeOf(f.created),
    f.lastUsed ? timeOf(f.lastUsed) : 'Never',
    html`<a href="/console/security/factors/${f.id}/remove">Remove<span class="skip"> ${f.name || (FACTOR_TYPES[f.type] ?? f.type)}</span></a>`,
  ],
)}`
    : html`<div class="notice warning"><p>Your account has no second factor: anyone with your password can sign in as
you. Add an authenticator app or a passkey.</p></div>`
}
<h3>Add an authenticator app</h3>
<p>An app on your phone, such as Google Authenticator, Microsoft Authenticator or 1Password, shows a new
6-digit code every 30 seconds.</p>
<form method="post" action="/console/security/totp" novalidate>${formTokenFields(o.form())}
${textField({ name: 'name', label: 'Name', optional: true, hint: 'So you can tell your factors apart, such as “Work phone”.', errors: o.errors })}
<button type="submit" class="secondary">Add an authenticator app</button>
</form>
<h3>Add a passkey</h3>
<p>A passkey signs you in with this device’s screen lock, fingerprint or face, or with a security key.</p>
<form method="post" action="/console/security/passkey/new" data-needs-webauthn hidden>${formTokenFields(o.form())}
<button type="submit" class="secondary">Add a passkey</button>
</form>
<noscript><p class="notice">Adding a passkey needs JavaScript, which is off in this browser. An authenticator
app works without it.</p></noscript>

<h2 id="recovery-codes">Recovery codes</h2>
<p>A recovery code signs you in when you do not have your phone or passkey with you. Each code works once.</p>
${
  o.recovery
    ? html`<p><strong>${o.recovery.remaining} ${o.recovery.remaining === 1 ? 'code' : 'codes'} left</strong>${
        o.recovery.total ? ` of ${o.recovery.total}` : ''
      }.</p>`
    : html`<p>You have no recovery codes.</p>`
}
${
  hasFactor
    ? html`<form method="post" action="/console/security/recovery-codes">${formTokenFields(o.form())}
${o.recovery ? html`<p class="hint">Generating new codes stops the ones you have now from working.</p>` : ''}
<button type="submit" class="secondary">Generate new codes</button>
</form>`
    : html`<p class="hint">Add an authenticator app or a passkey first.</p>`
}

<h2 id="sessions">Where you are signed in</h2>
${table(
  'Your sessions',
  ['Signed in', 'Last active', 'Address', 'Browser', 'How', { label: 'Actions', hidden: true }],
  o.sessions,
  (s) => [
    timeOf(s.created),
    timeOf(s.lastSeen),
    s.ip ?? 'Unknown',
    html`<span title="${s.userAgent ?? ''}">${browserOf(s.userAgent)}</span>`,
    s.authMethods.map((m) => METHODS[m] ?? m).join(', '),
    s.current
      ? html`<span class="tag">This session</span>`
      : actionButton(`/console/security/sessions/${s.id}/sign-out`, 'Sign out', o.form()),
  ],
)}
${
  otherSessions > 0
    ? html`<div class="actions">${actionButton('/console/security/sessions/sign-out-others', 'Sign out everywhere else', o.form(), {}, 'warning')}</div>`
    : ''
}
${
  o.platformAdministrator
    ? html`<h2 id="platform">The platform</h2>
<p><a href="/console/security/platform">Platform security</a>: whether platform roles need a second factor.</p>`
    : ''
}`
}

/** The page of an authenticator app being added: the QR code, the key to type, and the code to confirm. */
export function totpBody(o: {
  qrSvg: SafeHtml | undefined
  secret: string
  enrolment: string
  token: FormToken
  errors?: Errors | undefined
}): SafeHtml {
  return html`${errorSummary(o.errors, SECURITY_LABELS)}<h1>Add an authenticator app</h1>
<ol>
<li><p>In your authenticator app, add an account and scan this QR code.</p>
${o.qrSvg ? html`<div class="qr" role="img" aria-label="QR code to scan with your authenticator app">${o.qrSvg}</div>` : ''}
<p>If you cannot scan it, type this key instead:</p>
<p class="secret-key" id="secret-key">${groups(o.secret)}</p></li>
<li><p>Enter the 6-digit code the app now shows, to check it works.</p>
<form method="post" action="/console/security/totp/confirm" novalidate>${formTokenFields(o.token)}
<input type="hidden" name="enrolment" value="${o.enrolment}">
${textField({ name: 'code', label: 'Code', hint: 'The 6 digits your app shows for this account now.', autocomplete: 'one-time-code', errors: o.errors })}
<button type="submit">Confirm</button>
</form></li>
</ol>
<p><a href="/console/security">Cancel</a> (the app is not added until you confirm a code).</p>`
}

/** A base32 key in groups of four, as authenticator apps print them. */
function groups(secret: string): string {
  return (secret.match(/.{1,4}/g) ?? [secret]).join(' ')
}

/** The page of a passkey being added: its name, and the button that asks the browser (needs JavaScript). */
export function passkeyBody(o: {
  options: Record<string, unknown>
  token: FormToken
  problem?: string | undefined
}): SafeHtml {
  return html`<h1>Add a passkey</h1>
${o.problem ? html`<div class="notice warning" role="alert"><p>${o.problem}</p></div>` : ''}
<p>Your browser will ask you to use this device’s screen lock, fingerprint or face, or a security key.</p>
<form method="post" action="/console/security/passkey" data-passkey="register" data-options="${JSON.stringify(o.options)}" novalidate>
${formTokenFields(o.token)}<input type="hidden" name="webauthn" value="">
<div data-passkey-controls hidden>
${textField({ name: 'name', label: 'Name', optional: true, hint: 'So you can tell your passkeys apart, such as “Work laptop”.' })}
<div class="actions"><button type="button" data-passkey-start>Create a passkey</button></div>
</div>
<p class="passkey-status" data-passkey-status role="status"></p>
</form>
<noscript><p class="notice">Adding a passkey needs JavaScript, which is off in this browser. An authenticator
app works without it.</p></noscript>
<p><a href="/console/security">Cancel</a></p>`
}

/** The recovery codes, shown once, with a download of them as a text file (a data: link, no script). */
export function recoveryCodesBody(o: { codes: string[]; email: string }): SafeHtml {
  const text = `Tenantry recovery codes for ${o.email}\nEach code works once.\n\n${o.codes.join('\n')}\n`
  const href = `data:text/plain;charset=utf-8,${encodeURIComponent(text)}`
  return html`<h1>Your new recovery codes</h1>
<div class="notice warning" role="status"><p>Save these codes now: this is the only time they are shown. Codes
made before these no longer work.</p></div>
<p>Keep them somewhere safe, away from your phone. Each code signs you in once when you do not have your
authenticator app or passkey.</p>
<ol class="codes">${o.codes.map((code) => html`<li><code>${code}</code></li>`)}</ol>
<p class="actions"><a class="button" href="${href}" download="tenantry-recovery-codes.txt">Download the codes</a>
<a class="button secondary" href="/console/security">I have saved them</a></p>`
}

/** The confirmation of removing a factor. */
export function removeFactorBody(o: { factor: Factor; token: FormToken; last: boolean }): SafeHtml {
  const name = o.factor.name || (FACTOR_TYPES[o.factor.type] ?? o.factor.type)
  return html`<h1>Remove ${name}</h1>
<p>${FACTOR_TYPES[o.factor.type] ?? o.factor.type}, added ${timeOf(o.factor.created)}.</p>
${
  o.last
    ? html`<div class="notice warning"><p>It is your last second factor: after this, signing in needs only your
password, and your recovery codes stop meaning anything.</p></div>`
    : ''
}
<form method="post" action="/console/security/factors/${o.factor.id}/remove">${formTokenFields(o.token)}
<div class="actions"><button type="submit" class="warning">Remove this factor</button>
<a href="/console/security">Cancel</a></div>
</form>`
}

/**
 * The API's QR code, drawn inline (an image from a data: address would need the CSP to allow data:
 * images), but only when it is the plain SVG of `qrcode` — `svg` and `path` elements with drawing
 * attributes and nothing else: no script, no style, no link, no event attribute can come through. Else
 * undefined, and the page shows the key to type alone.
 */
export function qrCodeSvg(svg: string | undefined): SafeHtml | undefined {
  if (!svg) return undefined
  const tags = svg.trim().match(/<[^>]*>/g) ?? []
  const rest = svg.trim().replace(/<[^>]*>/g, '')
  if (rest.trim() !== '' || tags.length < 3 || !tags[0]?.startsWith('<svg ')) return undefined
  for (const tag of tags) {
    if (tag === '</svg>' || tag === '</path>') continue
    const parsed = /^<(svg|path)((?:\s+[a-zA-Z-]+="[^"<>&]*")*)\s*\/?>$/.exec(tag)
    if (!parsed) return undefined
    for (const [, name] of (parsed[2] ?? '').matchAll(/([a-zA-Z-]+)="/g))
      if (!QR_ATTRIBUTES.has(name ?? '')) return undefined
  }
  return new SafeHtml(svg.trim().replace(/^<svg /, '<svg aria-hidden="true" focusable="false" '))
}

const QR_ATTRIBUTES = new Set([
  'xmlns',
  'viewBox',
  'width',
  'height',
  'shape-rendering',
  'fill',
  'stroke',
  'stroke-width',
  'd',
  'version',
])
