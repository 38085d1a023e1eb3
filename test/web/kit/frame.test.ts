import { describe, expect, it } from 'vitest'
import { html } from '../../../src/html.js'
import { errorSummary, textField } from '../../../src/web/kit/forms.js'
import { frame } from '../../../src/web/kit/frame.js'

/**
 * The page kit's frame (docs/pages.md): the page's language and the brand are slots with today's
 * defaults, and the title rule adds "Error: " exactly when the page shows the error summary.
 */
const titleOf = (page: string) => /<title>(.*)<\/title>/.exec(page)?.[1]

describe('the page frame', () => {
  it("writes today's defaults: English, left to right, the Tenantry name and colour", () => {
    const page = frame({ title: 'Sign in' }, html`<h1>Sign in</h1>`)
    expect(page.startsWith('<!doctype html>\n<html lang="en" dir="ltr">')).toBe(true)
    expect(page).toContain('<meta name="theme-color" content="#1d4ed8">')
    expect(titleOf(page)).toBe('Sign in · Tenantry')
  })

  it("takes the page's language and a brand: name after the title, colour in the head", () => {
    const page = frame(
      { title: 'Accueil', language: 'fr-CA', brand: { name: 'Acme <Ops>', colour: '#AA0000' } },
      html`<h1>Accueil</h1>`,
    )
    expect(page).toContain('<html lang="fr-CA" dir="ltr">')
    expect(page).toContain('<meta name="theme-color" content="#AA0000">')
    expect(titleOf(page)).toBe('Accueil · Acme &lt;Ops&gt;')
    expect(frame({ title: 'x', language: 'ar-EG' }, html``)).toContain('<html lang="ar-EG" dir="rtl">')
  })

  it('falls back to the defaults for a language or a colour it cannot use', () => {
    const page = frame(
      { title: 'x', language: 'en" onload="x', brand: { name: 'Acme', colour: 'red;}body{display:none' } },
      html``,
    )
    expect(page).toContain('<html lang="en" dir="ltr">')
    expect(page).toContain('<meta name="theme-color" content="#1d4ed8">')
  })

  it('puts "Error: " before the title exactly when the page shows the error summary', () => {
    const labels = { email: 'E-mail' }
    const errors = { email: 'is required' }
    const failed = html`${errorSummary(errors, labels)}${textField({ name: 'email', label: 'E-mail', errors })}`
    expect(titleOf(frame({ title: 'Sign in' }, failed))).toBe('Error: Sign in · Tenantry')
    expect(titleOf(frame({ title: 'Sign in' }, html`<p>Signed out.</p>`))).toBe('Sign in · Tenantry')
    // A value that spells the summary's markup is escaped, so it is not taken for one.
    const spelled = html`<p>${'<div class="error-summary" data-error-summary'}</p>`
    expect(titleOf(frame({ title: 'Sign in' }, spelled))).toBe('Sign in · Tenantry')
  })
})
