// Prints where a vitest run's time went, from its JSON report: the number of files and tests, and the
// slowest files (wall time from the file's start to its end, set-up included).
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const files = report.testResults
  .map((file) => ({ name: relative(process.cwd(), file.name), ms: file.endTime - file.startTime }))
  .sort((a, b) => b.ms - a.ms)
const total = files.reduce((sum, file) => sum + file.ms, 0)
console.log(
  `${files.length} files, ${report.numTotalTests} tests (${report.numFailedTests} failed); ` +
    `file time ${(total / 1000).toFixed(0)} s over ${process.env.VITEST_MAX_WORKERS ?? 2} workers; slowest:`,
)
for (const file of files.slice(0, Number(process.argv[3] ?? 12))) {
  console.log(`  ${(file.ms / 1000).toFixed(1).padStart(6)} s  ${file.name}`)
}
