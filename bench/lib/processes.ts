import { type ChildProcess, spawn } from 'node:child_process'
import { openSync, readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'

/** A free TCP port on 127.0.0.1: bind port 0, read the port, let it go. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

export interface Service {
  name: string
  url: string
  child: ChildProcess
  /** What the process wrote to stderr (kept for when it dies). */
  stderr(): string
  stop(): Promise<void>
}

export interface ServiceOptions {
  name: string
  args: string[]
  env: Record<string, string>
  port: number
  /** Where stdout (the request log) goes: a file path, or undefined for /dev/null. */
  logFile?: string | undefined
  /** A path answering 200 once the process is ready. */
  readyPath: string
  readyTimeoutMs?: number
}

/**
 * The V8 flags production starts the server with (docs/operations.md), sized for a service:
 * - `--max-old-space-size=512`: with Node's default sizing (~4 GB on this machine) V8 lets the old
 *   generation grow to about 4× the live heap (~35 MB) before a full collection, so a 1,000,000-row bulk
 *   load peaked ~140 MB above the warmed-up server; with 512 MB it stays ~25–32 MB above, at the same speed
 *   (~65 MB with 32 MB semi-spaces);
 * - `--max-semi-space-size=16`: a young generation big enough that a request's garbage dies young instead
 *   of being promoted (V8 would size a smaller one from the 512 MB old generation). 32 once saved ~10 %
 *   of server CPU per write; since writes share statements it saves none measurably and costs ~30–40 MB
 *   of RSS (docs/performance.md).
 */
export const PRODUCTION_NODE_FLAGS = ['--max-old-space-size=512', '--max-semi-space-size=16']

/** Starts `node <args>` with the given environment and waits until `readyPath` answers 200. */
export async function startService(options: ServiceOptions): Promise<Service> {
  const stdout = options.logFile ? openSync(options.logFile, 'a') : 'ignore'
  const child = spawn(process.execPath, options.args, {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env },
    stdio: ['ignore', stdout, 'pipe'],
  })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < 20_000) stderr += chunk.toString()
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const url = `http://127.0.0.1:${options.port}`
  const service: Service = {
    name: options.name,
    url,
    child,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(killer)
    },
  }

  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000)
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`${options.name} exited with code ${child.exitCode} while starting:\n${stderr}`)
    }
    try {
      const response = await fetch(`${url}${options.readyPath}`)
      if (response.ok) return service
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await service.stop()
  throw new Error(`${options.name} did not become ready within the timeout:\n${stderr}`)
}

/** Peak resident memory of a process, polled from /proc (Linux); VmHWM is the kernel's own peak. */
export class RssSampler {
  #timer: NodeJS.Timeout | undefined
  #windowPeakKb = 0

  constructor(private readonly pid: number) {}

  start(intervalMs = 200): void {
    this.#timer = setInterval(() => {
      const rss = this.#read('VmRSS')
      if (rss !== undefined && rss > this.#windowPeakKb) this.#windowPeakKb = rss
    }, intervalMs)
    this.#timer.unref()
  }

  /** The highest RSS seen since the last call, in MB; starts a new window. */
  takeWindowPeakMb(): number {
    const rss = this.#read('VmRSS') ?? 0
    const peak = Math.max(this.#windowPeakKb, rss)
    this.#windowPeakKb = 0
    return peak / 1024
  }

  /** The process's peak RSS over its whole life, in MB. */
  lifetimePeakMb(): number {
    return (this.#read('VmHWM') ?? 0) / 1024
  }

  stop(): void {
    clearInterval(this.#timer)
  }

  #read(field: string): number | undefined {
    try {
      const status = readFileSync(`/proc/${this.pid}/status`, 'utf8')
      const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)
      return match ? Number(match[1]) : undefined
    } catch {
      return undefined
    }
  }
}

/** CPU seconds (user + system, every thread) a process has used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th overall.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
  } catch {
    return Number.NaN
  }
}

/** USER_HZ: 100 on every Linux build in practice. */
const CLOCK_TICKS = 100

/**
 * CPU seconds used so far by the PostgreSQL backends serving `database` on this machine, by pid (their
 * command line reads "postgres: <user> <database> <client> …"). Compare two snapshots with
 * `cpuBetween`: a backend started in between counts from zero.
 */
export function databaseCpuSnapshot(database: string): Map<number, number> {
  const snapshot = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      if (!cmdline.startsWith('postgres: ') || !cmdline.split(' ').includes(database)) continue
      snapshot.set(Number(entry), cpuSeconds(Number(entry)))
    } catch {
      // the process went away while we looked
    }
  }
  return snapshot
}

export function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0)
  return total
}
