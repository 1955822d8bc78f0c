/**
 * The state store for one `npm run keys` or `npm run users` command. Beside the accounts
 * store it opens, not in gateway/cli/, so the command plumbing there knows no store; and in a
 * file of its own, so the server, which opens the store through open.ts, never loads commander.
 */
import { action, CliFailure, loadConfig } from '../cli/program.ts';
import type { GatewayConfig } from '../config.ts';
import type { StateStore } from './model.ts';
import { openStateStore } from './open.ts';

/** Opens the gateway's own store (Postgres with DATABASE_URL, else SQLite in DATA_DIR) for one command. */
export async function withStore<T>(config: GatewayConfig, fn: (store: StateStore) => Promise<T>): Promise<T> {
  const store = await openStateStore(config).catch((error: Error) => {
    const where = config.DATABASE_URL
      ? 'the Postgres database in DATABASE_URL'
      : `DATA_DIR (${config.DATA_DIR})`;
    throw new CliFailure(`could not open the state store in ${where}: ${error.message}`);
  });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/**
 * A command's action on the store. `check` sees the arguments first, so a malformed one changes
 * nothing; the configuration loads and the store opens only after it. Commander passes the
 * command's arguments, its options and itself, and `run` gets them after the store and config.
 */
export function storeAction<A extends unknown[]>(
  run: (store: StateStore, config: GatewayConfig, ...args: A) => Promise<void>,
  check: (...args: A) => void = () => {},
) {
  return action(async (...args: A) => {
    check(...args);
    const config = loadConfig();
    await withStore(config, (store) => run(store, config, ...args));
  });
}
