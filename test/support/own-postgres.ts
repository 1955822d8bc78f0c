/**
 * A private native Postgres in a temporary data dir, for a test that takes its server away
 * (kill -9, stop) and for the benches: the run's shared server (postgres.ts) must stay up
 * for every other file. Not reaching postgres.ts, such a file makes the runner start no
 * shared server for it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalPostgres } from '../../dev/postgres/local-postgres.ts';

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
