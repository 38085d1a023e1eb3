/**
 * Writes the OpenAPI document the service publishes at /openapi.json to a file (default
 * openapi/tenantry.json), built by the same app factory as the server, on a throw-away memory://
 * database, without listening. `npm run lint:openapi` lints it; `npm run check:client` generates a typed
 * client from it.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { buildApp } from '../src/app.js'
import { systemClock } from '../src/clock.js'
import { loadConfig } from '../src/config.js'
import { resolveKeys } from '../src/crypto/keys.js'
import { openDatabase } from '../src/db/database.js'
import { createLogger } from '../src/logger.js'

const output = resolve(process.argv[2] ?? '.tmp/openapi.json')
const config = loadConfig({ DATABASE_URL: 'memory://', LOG_LEVEL: 'silent' })
const database = await openDatabase({ url: 'memory://', dataDir: '.tmp' })
try {
  const { app } = await buildApp({
    db: database.db,
    config,
    clock: systemClock,
    keys: resolveKeys(config),
    logger: createLogger('silent'),
    platform: { id: '00000000-0000-7000-8000-000000000000', name: 'Tenantry' },
  })
  await app.ready()
  mkdirSync(dirname(output), { recursive: true })
  writeFileSync(output, `${JSON.stringify(app.swagger(), null, 2)}\n`)
  await app.close()
  console.log(`OpenAPI document written to ${output}`)
} finally {
  await database.close()
}
