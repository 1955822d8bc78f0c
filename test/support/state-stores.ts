/**
 * Both state-store adapters for one test file: SQLite in a temporary DATA_DIR, and Postgres
 * as a database of the file's own on the run's native server (DATABASE_URL). Call it at the
 * top of a file: it adds the file's before/after hooks that make and drop them, and returns
 * each adapter's settings.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { createTestDatabase, type TestPostgres } from './postgres.ts';

export type StateStoreKind = 'sqlite' | 'postgres';

/** What a store, a CLI or a gateway reads to find the state store. */
export interface StateStoreEnv extends Record<string, string> {
  DATA_DIR: string;
}

export function bothStateStores(prefix: string): Record<StateStoreKind, () => StateStoreEnv> {
  let postgres: TestPostgres | undefined;
  let dataDir = '';
  before(async () => {
    postgres = await createTestDatabase();
    dataDir = await mkdtemp(join(tmpdir(), prefix));
  });
  after(async () => {
    await postgres?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });
  return {
    sqlite: () => ({ DATA_DIR: dataDir }),
    postgres: () => ({ DATA_DIR: dataDir, DATABASE_URL: postgres!.url }),
  };
}
