/** The same server, another database: for creating and dropping per-test databases. */
export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl)
  url.pathname = `/${database}`
  return url.toString()
}

/** The database named in TEST_DATABASE_URL is used only to run CREATE/DROP DATABASE. */
export function adminUrl(serverUrl: string): string {
  return serverUrl
}
