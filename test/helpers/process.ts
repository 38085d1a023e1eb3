import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { inject } from 'vitest'
import { bootstrap } from '../../src/bootstrap.js'
import { systemClock } from '../../src/clock.js'
import { openDatabase } from '../../src/db/database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { TEST_ADMIN } from './test-env.js'

export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface ServiceProcess {
  child: ChildProcess
  output(): string
  /** Resolves with the first output line matching `pattern`, or rejects when the process exits first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>
  exited: Promise<number | null>
}

/** Runs `tenantry <args>` from source, as `npm start` does, with the given environment. */
export function runTenantry(args: string[], env: Record<string, string | undefined>): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return watched(child)
}

/**
 * Runs `npm start` as a newcomer types it: with the PATH of the machine (the folders npm adds for this
 * run's own scripts taken out, so `node` there is the system's), in a process group of its own so that
 * stopping it stops npm, its shell and the service.
 */
export function runNpmStart(env: Record<string, string | undefined>): ServiceProcess {
  const systemPath = (process.env.PATH ?? '')
    .split(':')
    .filter((folder) => !folder.includes('node_modules'))
    .join(':')
  const child = spawn('npm', ['start'], {
    cwd: PROJECT_ROOT,
    env: { PATH: systemPath, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  return watched(child)
}

function watched(child: ChildProcess): ServiceProcess {
  let text = ''
  const listeners = new Set<() => void>()
  const onData = (chunk: Buffer) => {
    text += chunk.toString()
    for (const listener of listeners) listener()
  }
  child.stdout!.on('data', onData)
  child.stderr!.on('data', onData)
  const exited = once(child, 'exit').then(([code]) => code as number | null)

  return {
    child,
    output: () => text,
    exited,
    waitFor: (pattern, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = text.match(pattern)
          if (match) {
            cleanup()
            resolve(match)
          }
        }
        const timer = setTimeout(() => {
          cleanup()
          reject(new Error(`timed out waiting for ${pattern}; output:\n${text}`))
        }, timeoutMs)
        const cleanup = () => {
          clearTimeout(timer)
          listeners.delete(check)
        }
        listeners.add(check)
        exited.then(() => {
          check()
          if (listeners.has(check)) {
            cleanup()
            reject(new Error(`process exited before ${pattern}; output:\n${text}`))
          }
        })
        check()
      }),
  }
}

/**
 * Fills an embedded data folder with a migrated and bootstrapped database (administrator TEST_ADMIN) —
 * the run's template when it has one — so that a process started on it skips the embedded database's slow
 * first creation: for tests about something else than that first start, which test/process/service.test.ts
 * covers.
 */
export async function seedDataFolder(dataDir: string): Promise<void> {
  const template = inject('pgliteTemplatePath')
  const handle = await openDatabase({
    url: undefined,
    dataDir,
    ...(template ? { loadDataDir: new Blob([readFileSync(template)]) } : {}),
  })
  if (!template) {
    await migrateToLatest(handle.db)
    await bootstrap(handle.db, systemClock, TEST_ADMIN)
  }
  await handle.close()
}
