import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { scimTenant } from '../../helpers/scim.js'
import { createTestApp, FollowingClock, type TestApp } from '../../helpers/test-app.js'

/**
 * The python-scim project's compliance checker (scim2-tester 0.2.8, ../shared/tools/scim-compliance)
 * against a fresh tenant over real HTTP: discovery, CRUD, attributes and PATCH on every advertised
 * attribute must give 0 failed. Without python3 and its venv module it skips with a message — except
 * in CI, where it must run.
 */
const RUN_SH = resolve(import.meta.dirname, '../../../../shared/tools/scim-compliance/run.sh')
const CANDIDATES = [RUN_SH, '/work/shared/tools/scim-compliance/run.sh']

function run(
  cmd: string,
  args: string[],
  timeout: number,
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((done) => {
    execFile(cmd, args, { timeout, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout, err: stderr })
    })
  })
}

const script = CANDIDATES.find((path) => existsSync(path))
const python = await run('python3', ['-c', 'import venv, ensurepip'], 20_000)
const missing = !script
  ? 'the checker (../shared/tools/scim-compliance) is not beside the project'
  : python.code !== 0
    ? 'python3 with its venv module is not installed'
    : undefined
if (missing && process.env.CI !== 'true') console.warn(`SCIM compliance check skipped: ${missing}`)

let t: TestApp
let url: string
beforeAll(async () => {
  t = await createTestApp({ clock: new FollowingClock() })
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const address = t.app.server.address() as { port: number }
  url = `http://127.0.0.1:${address.port}`
})
afterAll(() => t.close())

it.skipIf(missing !== undefined && process.env.CI !== 'true')(
  'passes the SCIM 2.0 compliance checker with 0 failed',
  async () => {
    expect(missing, missing).toBeUndefined()
    const s = await scimTenant(t)
    const result = await run(script as string, [`${url}${s.base}`, s.token], 540_000)
    const summary = result.out.trim().split('\n').at(-1) ?? ''
    expect(summary, result.out).toMatch(/^\d+ passed, 0 failed/)
    expect(result.code, `${result.out}${result.err}`).toBe(0)
  },
  600_000,
)
