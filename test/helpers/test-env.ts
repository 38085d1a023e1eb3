/** Settings shared by the global setup and every test database. */
export const TEST_ADMIN = { email: 'admin@tenantry.test', password: 'admin-password-for-tests' }
export const TEST_SECRET_KEY = Buffer.alloc(32, 7)
export const TEST_TOKEN_SECRET = 'test-token-secret-that-is-long-enough-0123456789'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The embedded template, a dumped data folder (tar), when no TEST_DATABASE_URL is set. */
    pgliteTemplatePath: string
    /** The PostgreSQL template database's name, when TEST_DATABASE_URL is set. */
    pgTemplateDatabase: string
  }
}
