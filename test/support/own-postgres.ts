/**
 * A private native Postgres in a temporary data dir, for a test that takes its server away
 * (kill -9, stop) and for the benches: the run's shared server (postgres.ts) must stay up
 * for every other file. Not reaching postgres.ts, such a file makes the runner start no
 * shared server for it.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalPostgres } from '../../dev/postgres/local-postgres.ts';

/** The postmaster and its children (backends, checkpointer, WAL writer…), from /proc. */
function clusterPids(postmaster: number): number[] {
  const pids = [postmaster];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // The parent pid is the 4th field, after the command name in parentheses.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster) pids.push(Number(name));
    } catch {}
  }
  return pids;
}

export interface OwnPostgres {
  url: string;
  port: number;
  /** SIGKILL to the postmaster, as a crash would. */
  kill(): Promise<void>;
  /**
   * SIGSTOP to the postmaster and every backend: a server that keeps its connections open
   * and answers nothing (a hung host, a partition without resets). `thaw` resumes them.
   */
  freeze(): Promise<void>;
  thaw(): Promise<void>;
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
    async freeze() {
      for (const pid of clusterPids(server.pid)) process.kill(pid, 'SIGSTOP');
    },
    async thaw() {
      for (const pid of clusterPids(server.pid)) process.kill(pid, 'SIGCONT');
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
