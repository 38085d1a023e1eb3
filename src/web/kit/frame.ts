import {
  type Brand,
  brandColour,
  DEFAULT_BRAND,
  html,
  languageAttributes,
  type SafeHtml,
} from '../../html.js'
import { ERROR_SUMMARY_OPENING } from './forms.js'

/**
 * The one frame of every page a person sees (docs/pages.md): the console, the
 * acceptance and reset pages and the single sign-on pages. It writes the doctype, `<html lang dir>`,
 * the head (charset, viewport, noindex, the title by the kit's rule, the brand's colour) and the main
 * region; each kind of page adds its own head links, top of the page and scripts.
 */
export interface FrameOptions {
  /** The page's own title; the kit adds "Error: " before it and the site's name after it. */
  title: string
  /** The page's language (a BCP 47 tag) for `<html lang>`; English by default. */
  language?: string | undefined
  brand?: Brand | undefined
  /** The name after the title ("· Tenantry console"); the brand's name by default. */
  site?: string | undefined
  /** What else the head carries: a stylesheet, an icon, a refresh. */
  head?: SafeHtml | undefined
  /** What comes before the main region: a skip link, a header. */
  top?: SafeHtml | undefined
  /** What comes after the main region: the page's script. */
  end?: SafeHtml | undefined
}

const ERROR_PREFIX = 'Error: '

/**
 * The title rule (GOV.UK): "<page> · <site>", and "Error: " first whenever the page shows the error
 * summary, so a screen reader says at once that the form came back with problems. Pages hand in their own
 * title only: the prefix is the kit's alone (docs/pages.md).
 */
export function pageTitle(title: string, site: string, hasErrors: boolean): string {
  return `${hasErrors ? ERROR_PREFIX : ''}${title} · ${site}`
}

/**
 * Whether a body shows the kit's error summary. Its opening tag cannot come from a value: `html` escapes
 * every `<` a value holds, so only the kit's own markup matches.
 */
export function showsErrors(body: SafeHtml): boolean {
  return body.value.includes(ERROR_SUMMARY_OPENING)
}

export function frame(options: FrameOptions, body: SafeHtml): string {
  const brand = options.brand ?? DEFAULT_BRAND
  const { lang, dir } = languageAttributes(options.language)
  const title = pageTitle(options.title, options.site ?? brand.name, showsErrors(body))
  return html`<!doctype html>
<html lang="${lang}" dir="${dir}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta name="theme-color" content="${brandColour(brand)}">
<title>${title}</title>
${options.head}
</head>
<body>
${options.top}
<main id="main" tabindex="-1">
${body}
</main>
${options.end}
</body>
</html>
`.value
}
