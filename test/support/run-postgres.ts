/**
 * The one native Postgres of a test run (test/run.ts): started when a selected file reaches
 * test/support/postgres.ts, in a temporary data dir, with test-run settings (no fsync, many
 * connections), and stopped with its data dir removed when the run ends, fails or is
 * interrupted. Each file makes its own database on it (createTestDatabase).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LocalPostgres, startLocalPostgres } from '../../dev/postgres/local-postgres.ts';

export interface RunPostgres {
  /** TEST_POSTGRES_URL for the test processes; empty when no file needs Postgres. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startRunPostgres(postgresFiles: string[]): Promise<RunPostgres> {
  if (postgresFiles.length === 0) {
    console.log('[run] no selected test file uses test/support/postgres.ts: no Postgres for this run');
    return { env: {}, stop: async () => {} };
  }
  console.log(`[run] ${postgresFiles.length} selected test files use Postgres: starting a native server`);
  const started = performance.now();
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-gw-test-pg-'));
  let server: LocalPostgres;
  try {
    server = await startLocalPostgres({
      dataDir,
      port: 0,
      shortLived: true,
      log: (line) => console.log(`[postgres] ${line}`),
    });
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  console.log(`[postgres] up in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= server.stop().then(() => rm(dataDir, { recursive: true, force: true }));
    return stopping;
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void stop().finally(() => process.exit(130));
    });
  }
  return { env: { TEST_POSTGRES_URL: server.url }, stop };
}
