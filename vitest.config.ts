import { defineConfig } from 'vitest/config'

// Each test file gets its own database, copied from a template that the global setup migrates and
// bootstraps once: a dumped embedded database, or a PostgreSQL template database when
// TEST_DATABASE_URL is set.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
})
