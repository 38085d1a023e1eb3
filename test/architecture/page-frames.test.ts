import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * One page kit and one mail kit (docs/pages.md): the frame of a page and of an e-mail are each written
 * once, and a module of the service renders no HTML — it answers data, which src/web/ makes a page of.
 */
const root = resolve(import.meta.dirname, '../..')
const sources = (readdirSync(join(root, 'src'), { recursive: true }) as string[])
  .filter((path) => path.endsWith('.ts'))
  .map((path) => ({ path: `src/${path}`, text: readFileSync(join(root, 'src', path), 'utf8') }))

describe('the frames of pages and e-mails', () => {
  it('writes <!doctype html> in two places: the page kit and the mail kit', () => {
    const framing = sources.filter(({ text }) => /<!doctype/i.test(text)).map(({ path }) => path)
    expect(framing.sort()).toEqual(['src/outbox/mail/mail-kit.ts', 'src/web/kit/frame.ts'])
  })

  it('leaves HTML out of the modules: none imports the HTML writer', () => {
    const rendering = sources
      .filter(({ path }) => path.startsWith('src/modules/'))
      .filter(({ text }) => /from '(\.\.\/)+html\.js'/.test(text))
      .map(({ path }) => path)
    expect(rendering).toEqual([])
  })
})
