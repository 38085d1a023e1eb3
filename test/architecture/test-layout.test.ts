import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DATABASE_FREE_TESTS, OWN_DATABASE_TESTS } from '../../vitest.config.js'

/** The layout of test/ (README, Tests): files beside the part of src/ they cover, helpers in one place. */
const root = resolve(import.meta.dirname, '../..')
const testFiles = (readdirSync(join(root, 'test'), { recursive: true }) as string[])
  .filter((path) => path.endsWith('.test.ts'))
  .map((path) => `test/${path}`)

/** A glob of DATABASE_FREE_TESTS (`dir/**` or one file) as a predicate. */
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
