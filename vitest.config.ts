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
  'test/modules/bulk/bulk-units.test.ts',
  'test/modules/scim/patch-members.test.ts',
]

/**
 * Test files that tell all on one database: the pages in Chromium — the console's (test/web/console/)
 * and the public ones — reach the database only through the /v1 API (app.inject) and the routes whose
 * behaviour on each database the module tests show; the SCIM compliance checker speaks only HTTP to
 * routes the SCIM tests run on both. test/architecture/test-layout.test.ts checks that every test
 * driving Chromium is listed here.
 */
export const ONE_DATABASE_TESTS = [
  'test/web/console/**',
  'test/web/invitation.test.ts',
  'test/web/kit/error-summary.test.ts',
  'test/web/password-reset.test.ts',
  'test/web/sso.test.ts',
  'test/modules/scim/compliance.test.ts',
]

/**
 * Test files that choose their own database — an embedded data folder, `memory://`, a bad URL, a
 * PostgreSQL cluster of their own — and so never the run's: TEST_DATABASE_URL changes nothing they do.
 * test/architecture/test-layout.test.ts checks that none of them opens the run's database.
 */
export const OWN_DATABASE_TESTS = [
  'test/modules/integrations/restart.test.ts',
  'test/process/faults-database.test.ts',
  'test/process/operations.test.ts',
  'test/process/service.test.ts',
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
      // CI's PostgreSQL leg, after the embedded leg ran them.
      ...(process.env.TEST_SKIP_ONE_LEG === 'true' ? [...ONE_DATABASE_TESTS, ...OWN_DATABASE_TESTS] : []),
    ],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
})
