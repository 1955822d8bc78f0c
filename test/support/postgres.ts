/**
 * Postgres for tests: the native PostgreSQL 18.6 + pgvector 0.8.6 of dev/postgres, never an
 * emulation. test/run.ts starts one server for the whole run when a selected file reaches
 * this module (test/support/test-needs.ts) and passes its address in TEST_POSTGRES_URL;
 * each file takes its own database on it (createTestDatabase), dropped when the file ends.
 * A test that stops or kills its server (an outage) starts a private one instead
 * (own-postgres.ts), so the shared server stays up for every other file.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface TestPostgres {
  /** A postgres:// URL for DATABASE_URL, naming this file's own database. */
  url: string;
  /** The database's name. */
  database: string;
  /** Drops the database (connections still open to it are ended). */
  close(): Promise<void>;
}

/** The runner's server, as a superuser connection to its `postgres` database. */
export function runPostgresUrl(): string {
  const url = process.env.TEST_POSTGRES_URL;
  if (!url) {
    throw new Error(
      'no test Postgres: this file imports test/support/postgres.ts but was not run through `npm test` ' +
        '(test/run.ts starts the server and sets TEST_POSTGRES_URL)',
    );
  }
  return url;
}

async function admin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A fresh database on the run's server. `withoutVector` makes it one whose server has no pgvector. */
export async function createTestDatabase(options: { withoutVector?: boolean } = {}): Promise<TestPostgres> {
  const server = runPostgresUrl();
  const database = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin(server, async (client) => {
    await client.query(`CREATE DATABASE ${database}`);
    // PostgreSQL 18 looks for extensions along extension_control_path: pointed at an empty
    // place, this database sees exactly what a server without pgvector shows
    // ('extension "vector" is not available').
    if (options.withoutVector)
      await client.query(`ALTER DATABASE ${database} SET extension_control_path = '/nonexistent'`);
  });
  const url = new URL(server);
  url.pathname = `/${database}`;
  let closed: Promise<void> | undefined;
  return {
    url: url.toString(),
    database,
    close() {
      closed ??= admin(server, async (client) => {
        await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      });
      return closed;
    },
  };
}
