import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { inject } from 'vitest'
import { type DatabaseHandle, openDatabase } from '../../src/db/database.js'
import { adminUrl, databaseUrl } from './pg-urls.js'

export interface TestDatabase {
  handle: DatabaseHandle
  /** The database's URL: a postgres:// URL, or memory:// for the embedded one. */
  url: string
  /** Another connection pool to the same database (PostgreSQL only: e.g. a second worker). */
  connectAgain(): Promise<DatabaseHandle>
  drop(): Promise<void>
}

let templateBlob: Blob | undefined

/** A fresh, migrated and bootstrapped database of its own, copied from the run's template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.TEST_DATABASE_URL
  if (serverUrl) {
    const name = `tenantry_test_${randomBytes(6).toString('hex')}`
    const admin = new pg.Client({ connectionString: adminUrl(serverUrl) })
    await admin.connect()
    try {
      await admin.query(`create database ${name} template ${inject('pgTemplateDatabase')}`)
    } finally {
      await admin.end()
    }
    const url = databaseUrl(serverUrl, name)
    const handle = await openDatabase({ url, dataDir: '' })
    const extra: DatabaseHandle[] = []
    return {
      handle,
      url,
      connectAgain: async () => {
        const again = await openDatabase({ url, dataDir: '' })
        extra.push(again)
        return again
      },
      drop: async () => {
        await Promise.all([handle, ...extra].map((h) => h.close().catch(() => {})))
        const dropper = new pg.Client({ connectionString: adminUrl(serverUrl) })
        await dropper.connect()
        await dropper.query(`drop database if exists ${name} with (force)`)
        await dropper.end()
      },
    }
  }

  templateBlob ??= new Blob([readFileSync(inject('pgliteTemplatePath'))])
  const handle = await openDatabase({ url: 'memory://', dataDir: '', loadDataDir: templateBlob })
  return {
    handle,
    url: 'memory://',
    connectAgain: async () => {
      throw new Error(
        'the embedded database has one connection; use TEST_DATABASE_URL for multi-connection tests',
      )
    },
    drop: () => handle.close(),
  }
}

export const onServerDatabase = Boolean(process.env.TEST_DATABASE_URL)
