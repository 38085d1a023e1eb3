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
      invitees: { type: 'string' },
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
    invitees:
      values.invitees === undefined
        ? enoughInvitees(number('rounds'), number('warmup') + number('rewarmup') + number('duration'))
        : number('invitees'),
    logins: number('logins'),
  }
}

/**
 * Invitees enough for every invitation the run can send: the invite scenario and its ceiling each invite
 * a new person per request, through each round's windows, at up to INVITES_PER_SECOND. A fixed 120,000
 * ran out on a quiet machine (about 4,000 invitations a second each); a run that still exhausts them
 * says so and fails.
 */
function enoughInvitees(rounds: number, secondsPerRound: number): number {
  return Math.ceil(INVITES_PER_SECOND * secondsPerRound * 2 * Math.max(rounds, 1))
}
const INVITES_PER_SECOND = 8000
