/**
 * Postgres for tests: the native PostgreSQL 18.6 + pgvector 0.8.6 of dev/postgres, never an
 * emulation. test/run.ts starts one server for the whole run when a selected file reaches
 * this module (test/support/test-needs.ts) and passes its address in TEST_POSTGRES_URL;
 * each file takes its own database on it (createTestDatabase), dropped when the file ends.
 * A test that stops or kills its server (an outage) starts a private one (startOwnPostgres),
 * so the shared server stays up for every other file.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startLocalPostgres } from '../../dev/postgres/local-postgres.ts';

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

export interface OwnPostgres {
  url: string;
  port: number;
  /** SIGKILL to the postmaster, as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data dir (crash recovery runs first). */
  restart(): Promise<void>;
  /** Stops it (if running) and removes its data dir. */
  close(): Promise<void>;
}

/** A private server in a temporary data dir, for a test that takes it away. */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-test-own-pg-'));
  let server = await startLocalPostgres({ dataDir, port: 0, shortLived: true });
  let up = true;
  const port = server.port;
  return {
    url: server.url,
    port,
    async kill() {
      process.kill(server.pid, 'SIGKILL');
      up = false;
    },
    async restart() {
      await server.stop();
      server = await startLocalPostgres({ dataDir, port, shortLived: true, startTimeoutMs: 120_000 });
      up = true;
    },
    async close() {
      if (up) await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
