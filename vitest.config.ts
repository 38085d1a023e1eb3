import { configDefaults, defineConfig } from 'vitest/config'

/**
 * Test files whose outcome cannot depend on the database: pure functions, the import rules, the outbound
 * rule against loopback peers. TEST_DATABASE_ONLY=true leaves them out — CI's PostgreSQL leg, where
 * they would only repeat what the embedded leg told. test/architecture/test-layout.test.ts checks that
 * none of them opens a database.
 */
export const DATABASE_FREE_TESTS = [
  'test/access/**',
  'test/architecture/**',
  'test/core/config.test.ts',
  'test/crypto/**',
  'test/db/statement-batcher.test.ts',
  'test/http/outbound.test.ts',
  'test/modules/**',
]

// Each test file gets its own database, copied from a template that the global setup migrates and
// bootstraps once: a dumped embedded database, or a PostgreSQL template database when
// TEST_DATABASE_URL is set.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [
      ...configDefaults.exclude,
      ...(process.env.TEST_DATABASE_ONLY === 'true' ? DATABASE_FREE_TESTS : []),
    ],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
})
