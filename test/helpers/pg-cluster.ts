import { execFile } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort } from './free-port.js'

const run = promisify(execFile)

/**
 * A PostgreSQL server of a test's own: a cluster made with initdb in a temporary folder, listening on a
 * free loopback port, that the test may stop and start at will — never the shared server. initdb refuses
 * to run as root, so as root every command runs as the `postgres` user (which owns the folder).
 */
export interface PgCluster {
  url: string
  port: number
  stop(mode?: 'fast' | 'immediate'): Promise<void>
  start(): Promise<void>
  /** Stops the server and removes the folder. */
  destroy(): Promise<void>
}

/** The bin folder of the newest installed PostgreSQL with initdb, or undefined. */
export function findPostgresBin(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
  for (const version of versions) {
    const bin = join(root, version, 'bin')
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin
  }
  return undefined
}

export async function createPgCluster(bin: string): Promise<PgCluster> {
  const asRoot = userInfo().uid === 0
  // As root the server runs as `postgres`, which must be able to reach its folder: TMPDIR may be a
  // private (0700) folder of root's — CI gives each leg one — so the cluster goes under /tmp then.
  const parent = asRoot ? '/tmp' : tmpdir()
  const folder = mkdtempSync(join(parent, 'tenantry-pgcluster-'))
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres'])
    const { stdout: gid } = await run('id', ['-g', 'postgres'])
    chownSync(folder, Number(stdout.trim()), Number(gid.trim()))
  }
  const data = join(folder, 'data')
  const pgRun = (command: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', join(bin, command), ...args], { cwd: folder })
      : run(join(bin, command), args, { cwd: folder })

  await pgRun('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'])
  const port = await freePort()
  const options = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${folder}`,
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
  ].join(' ')
  let running = false
  const cluster: PgCluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await pgRun('pg_ctl', ['-D', data, '-o', options, '-l', join(folder, 'server.log'), '-w', 'start'])
      running = true
    },
    async stop(mode = 'fast') {
      await pgRun('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop'])
      running = false
    },
    async destroy() {
      if (running) await cluster.stop('immediate').catch(() => {})
      rmSync(folder, { recursive: true, force: true })
    },
  }
  try {
    await cluster.start()
  } catch (error) {
    await cluster.destroy()
    throw error
  }
  return cluster
}
