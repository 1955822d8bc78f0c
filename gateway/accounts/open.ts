/** Picks the state adapter from settings: Postgres when DATABASE_URL is set, else SQLite in DATA_DIR. */
import { join } from 'node:path';
import type { StateStore } from './model.ts';
import { SqliteStateStore } from './sqlite-store.ts';

export function stateStorePath(dataDir: string): string {
  // The file predates accounts; keeping its name keeps existing keys.
  return join(dataDir, 'api-keys.sqlite');
}

export async function openStateStore(settings: {
  DATA_DIR: string;
  DATABASE_URL?: string | undefined;
}): Promise<StateStore> {
  if (settings.DATABASE_URL) {
    const { PostgresStateStore } = await import('./postgres-store.ts');
    return PostgresStateStore.connect(settings.DATABASE_URL);
  }
  return new SqliteStateStore(stateStorePath(settings.DATA_DIR));
}
