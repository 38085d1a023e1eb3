import cliProgress from 'cli-progress'

/** What an import reports while it runs. */
export interface Progress {
  update(done: number, failed: number): void
  /** A message on a line of its own (the bar redraws below it). */
  note(text: string): void
  stop(): void
}

export interface ProgressOptions {
  stream: NodeJS.WriteStream
  /** Rows expected (an estimate), for the bar's percentage and ETA. */
  total: number
  /** Plain lines this often when not on a terminal. */
  intervalMs?: number
  now?: () => number
}

/** Rows a second since `startedAt`, for display. */
function rate(done: number, startedAt: number, now: number): number {
  const seconds = (now - startedAt) / 1000
  return seconds > 0 ? Math.round(done / seconds) : 0
}

/**
 * A progress bar with rows/s on a terminal; on anything else (a log file, CI) one plain line every few
 * seconds, since a bar redrawn with carriage returns makes an unreadable log.
 */
export function createProgress(options: ProgressOptions): Progress {
  const now = options.now ?? Date.now
  const startedAt = now()
  if (options.stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream: options.stream,
        format:
          'Importing |{bar}| {percentage}% | {value}/{total} rows | {rate} rows/s | {failed} failed | ETA {eta_formatted}',
        hideCursor: true,
        fps: 5,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    )
    bar.start(Math.max(options.total, 1), 0, { rate: 0, failed: 0 })
    return {
      update(done, failed) {
        if (done > bar.getTotal()) bar.setTotal(done)
        bar.update(done, { rate: rate(done, startedAt, now()), failed })
      },
      note(text) {
        // Clear the bar's line, print, and let the next update draw the bar again.
        options.stream.write(`\r\x1b[K${text}\n`)
      },
      stop() {
        bar.stop()
      },
    }
  }

  const intervalMs = options.intervalMs ?? 2000
  let lastPrinted = startedAt
  let last = { done: 0, failed: 0 }
  const print = () => {
    const total = options.total > 0 ? `/${options.total}` : ''
    options.stream.write(
      `imported ${last.done}${total} rows (${rate(last.done, startedAt, now())} rows/s), ${last.failed} failed\n`,
    )
  }
  return {
    update(done, failed) {
      last = { done, failed }
      if (now() - lastPrinted >= intervalMs) {
        lastPrinted = now()
        print()
      }
    },
    note(text) {
      options.stream.write(`${text}\n`)
    },
    stop() {},
  }
}
