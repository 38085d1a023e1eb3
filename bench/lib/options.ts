import { parseArgs } from 'node:util'

/** The command line of `npm run bench` (docs/performance.md lists it). */
export interface BenchOptions {
  out: string | undefined
  connections: number
  rounds: number
  /** Seconds of warm-up before a workload's first measured window, and before its later ones. */
  warmupSeconds: number
  rewarmupSeconds: number
  measureSeconds: number
  /** Workload ids to run (a subset, while working on one operation); undefined: all. */
  only: Set<string> | undefined
  /** Where the server's log goes; undefined: /dev/null. */
  serverLog: string | undefined
  /** The build to measure (A/B comparisons). */
  serverEntry: string
  /** Extra environment for the server (e.g. TENANTRY_WORKER=off). */
  serverEnv: Record<string, string>
  /** A folder for V8 CPU profiles of the server and the ceiling process. */
  profileDir: string | undefined
  invitees: number
  logins: number
}

export function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      out: { type: 'string' },
      connections: { type: 'string', default: '50' },
      rounds: { type: 'string', default: '3' },
      warmup: { type: 'string', default: '3' },
      rewarmup: { type: 'string', default: '1.5' },
      duration: { type: 'string', default: '5' },
      only: { type: 'string' },
      'server-log': { type: 'string' },
      'server-entry': { type: 'string', default: 'dist/src/main.js' },
      'server-env': { type: 'string', multiple: true },
      profile: { type: 'string' },
      invitees: { type: 'string', default: '120000' },
      logins: { type: 'string', default: '5000' },
    },
  })
  const number = (name: keyof typeof values) => {
    const value = Number(values[name])
    if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a number`)
    return value
  }
  const serverEnv: Record<string, string> = {}
  for (const pair of values['server-env'] ?? []) {
    const equals = pair.indexOf('=')
    if (equals < 1) throw new Error(`--server-env takes KEY=VALUE (got "${pair}")`)
    serverEnv[pair.slice(0, equals)] = pair.slice(equals + 1)
  }
  return {
    out: values.out,
    connections: number('connections'),
    rounds: number('rounds'),
    warmupSeconds: number('warmup'),
    rewarmupSeconds: number('rewarmup'),
    measureSeconds: number('duration'),
    only: values.only ? new Set(values.only.split(',')) : undefined,
    serverLog: values['server-log'],
    serverEntry: values['server-entry'],
    serverEnv,
    profileDir: values.profile,
    invitees: number('invitees'),
    logins: number('logins'),
  }
}
