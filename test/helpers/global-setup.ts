import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { bootstrap } from '../../src/bootstrap.js'
import { systemClock } from '../../src/clock.js'
import { openDatabase } from '../../src/db/database.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { adminUrl, databaseUrl } from './pg-urls.js'
import { TEST_ADMIN } from './test-env.js'

/**
 * Builds the template every test database is copied from: migrated and bootstrapped once per run, so a
 * test file starts from a ready database in well under a second.
 */
export default async function setup(project: TestProject) {
  const serverUrl = process.env.TEST_DATABASE_URL
  if (serverUrl) {
    const template = `tenantry_tpl_${process.pid}_${Date.now()}`
    const admin = new pg.Client({ connectionString: adminUrl(serverUrl) })
    await admin.connect()
    await admin.query(`create database ${template}`)
    const handle = await openDatabase({ url: databaseUrl(serverUrl, template), dataDir: '' })
    await migrateToLatest(handle.db)
    await bootstrap(handle.db, systemClock, TEST_ADMIN)
    await handle.close()
    project.provide('pgTemplateDatabase', template)
    project.provide('pgliteTemplatePath', '')
    return async () => {
      await admin.query(`drop database if exists ${template} with (force)`)
      await admin.end()
    }
  }

  const dir = mkdtempSync(join(tmpdir(), 'tenantry-template-'))
  const handle = await openDatabase({ url: 'memory://', dataDir: dir })
  await migrateToLatest(handle.db)
  await bootstrap(handle.db, systemClock, TEST_ADMIN)
  const dump = await handle.pglite!.dumpDataDir('none')
  const path = join(dir, 'template.tar')
  writeFileSync(path, Buffer.from(await dump.arrayBuffer()))
  await handle.close()
  project.provide('pgliteTemplatePath', path)
  project.provide('pgTemplateDatabase', '')
  return () => rmSync(dir, { recursive: true, force: true })
}
