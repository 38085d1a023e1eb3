import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DATABASE_FREE_TESTS, ONE_DATABASE_TESTS, OWN_DATABASE_TESTS } from '../../vitest.config.js'

/**
 * The layout of test/ (README, Tests): test/ mirrors src/ by name — a folder of test files is named after
 * the folder or file of src/ it covers (test/modules/users ↔ src/modules/users, test/web/console ↔
 * src/web/console) — and helpers are in one place.
 */
const root = resolve(import.meta.dirname, '../..')
const testFiles = (readdirSync(join(root, 'test'), { recursive: true }) as string[])
  .filter((path) => path.endsWith('.test.ts'))
  .map((path) => `test/${path}`)

/**
 * The folders of test/ that name no part of src/: the shared helpers, the rules over the whole tree, the
 * tests that start service processes or clusters, and core/ — src/'s top-level files (config.ts,
 * background.ts).
 */
const NOT_MIRRORING = ['helpers', 'architecture', 'process', 'core']

/** A glob of vitest.config.ts's lists (`dir/**` or one file) as a predicate. */
const matches = (glob: string) => (path: string) =>
  glob.endsWith('/**') ? path.startsWith(glob.slice(0, -2)) : path === glob

describe('the test folder', () => {
  it('has no test file at its top: each lies in the folder of what it covers', () => {
    expect(testFiles.filter((path) => relative('test', path).split('/').length === 1)).toEqual([])
  })

  it('has no test file over 500 lines: a large module splits by concern (happy paths, errors, security)', () => {
    const long = testFiles
      .map((path) => ({ path, lines: readFileSync(join(root, path), 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > 500)
    expect(long).toEqual([])
  })

  it('names each folder of test files after a folder or file of src/, so the mirror cannot drift', () => {
    const folders = [...new Set(testFiles.map((path) => relative('test', dirname(path))))]
    expect(folders).toContain('modules/users')
    const unmirrored = folders.filter(
      (folder) =>
        !NOT_MIRRORING.includes(folder.split('/')[0] ?? '') &&
        !existsSync(join(root, 'src', folder)) &&
        !existsSync(join(root, 'src', `${folder}.ts`)),
    )
    expect(unmirrored).toEqual([])
  })

  it('names in vitest.config.ts’s lists only paths that hold test files', () => {
    const stale = [...DATABASE_FREE_TESTS, ...ONE_DATABASE_TESTS, ...OWN_DATABASE_TESTS].filter(
      (glob) => !testFiles.some(matches(glob)),
    )
    expect(stale).toEqual([])
  })

  it('lists every test that drives Chromium as telling all on one database', () => {
    const inChromium = testFiles.filter((path) =>
      /helpers\/(browser|console|console-admin|sso-browser-app)\.js/.test(
        readFileSync(join(root, path), 'utf8'),
      ),
    )
    expect(inChromium.length).toBeGreaterThan(10)
    expect(inChromium.filter((path) => !ONE_DATABASE_TESTS.some((glob) => matches(glob)(path)))).toEqual([])
  })

  it('lists as database-free only files that open no database and start no app', () => {
    const free = testFiles.filter((path) => DATABASE_FREE_TESTS.some((glob) => matches(glob)(path)))
    expect(free.length).toBeGreaterThan(5)
    const opening = free.filter((path) =>
      /helpers\/(test-app|test-database|fixtures|process|pg-cluster|pg-urls|browser)\.js|src\/(db\/database|app|server)\.js/.test(
        readFileSync(join(root, path), 'utf8'),
      ),
    )
    expect(opening).toEqual([])
  })

  it('lists as choosing their own database only files that never open the run’s database', () => {
    for (const path of OWN_DATABASE_TESTS) expect(testFiles).toContain(path)
    const usingTheRuns = OWN_DATABASE_TESTS.filter((path) =>
      /helpers\/(test-app|test-database)\.js|TEST_DATABASE_URL/.test(readFileSync(join(root, path), 'utf8')),
    )
    expect(usingTheRuns).toEqual([])
  })
})
