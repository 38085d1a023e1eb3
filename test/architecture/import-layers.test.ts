import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const root = resolve(import.meta.dirname, '../..')
const depcruise = join(root, 'node_modules/.bin/depcruise')
const config = join(root, '.dependency-cruiser.cjs')

async function cruise(cwd: string): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout } = await run(depcruise, ['src', '--config', config], { cwd })
    return { ok: true, output: stdout }
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string }
    return { ok: false, output: `${failure.stdout ?? ''}${failure.stderr ?? ''}` }
  }
}

/** A throw-away tree with the given files, cruised with the project's own rules. */
function plant(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'tenantry-layers-'))
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext' } }))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  planted.push(dir)
  return dir
}
const planted: string[] = []
afterAll(() => {
  for (const dir of planted) rmSync(dir, { recursive: true, force: true })
})

describe('import layers (npm run lint:imports)', () => {
  it('finds no import that points up in the project itself', async () => {
    const result = await cruise(root)
    expect(result.output).toContain('no dependency violations')
    expect(result.ok).toBe(true)
  })

  it('fails on a planted upward import: db/ importing a module', async () => {
    const dir = plant({
      'src/modules/users/users.service.ts': 'export const x = 1\n',
      'src/db/leak.ts': "import { x } from '../modules/users/users.service.js'\nexport const y = x\n",
    })
    const result = await cruise(dir)
    expect(result.ok).toBe(false)
    expect(result.output).toContain('no-upward-from-db')
  })

  it('fails on a planted cycle between two modules, even through files that import no file back', async () => {
    const dir = plant({
      'src/modules/users/users.service.ts':
        "import { m } from '../memberships/member.js'\nexport const u = m\n",
      'src/modules/users/user-rules.ts': 'export const rule = 1\n',
      'src/modules/memberships/member.ts': 'export const m = 1\n',
      'src/modules/memberships/invite.ts':
        "import { rule } from '../users/user-rules.js'\nexport const i = rule\n",
    })
    const result = await cruise(dir)
    expect(result.ok).toBe(false)
    expect(result.output).toContain('no-cycle-between-modules')
  })

  it('fails on a file outside every layer, so a new folder must be placed first', async () => {
    const dir = plant({
      'src/errors.ts': 'export const e = 1\n',
      'src/newthing/thing.ts': "import { e } from '../errors.js'\nexport const t = e\n",
    })
    const result = await cruise(dir)
    expect(result.ok).toBe(false)
    expect(result.output).toContain('no-unlayered')
  })
})
