import type pg from 'pg';
import { lazyRequire } from '../../shared/lazy-require.ts';
import { isStoreUnreachable } from './unreachable.ts';

const loadPg = lazyRequire<typeof pg>('pg');

export type PgPool = pg.Pool;
export type PgClient = pg.PoolClient;

/** True when a setting names a Postgres server (the only engine DATABASE_URL selects). */
export function isPostgresUrl(url: string | undefined): url is string {
  return url !== undefined && /^postgres(ql)?:\/\//i.test(url);
}

/**
 * How long a checkout waits for a new connection. Without it a server that accepts nothing
 * (stopped, partitioned) held a request until the client gave up; with it the caller fails
 * in time to answer 503 or STORE_UNAVAILABLE.
 */
export const PG_CONNECT_TIMEOUT_MS = 5_000;

/**
 * A connection pool for DATABASE_URL. Errors on idle clients (a server restart, a dropped
 * connection) are logged instead of crashing the process; the pool replaces the client
 * on the next checkout.
 */
export function createPgPool(
  url: string,
  options: {
    max?: number;
    onIdleError?: (error: Error) => void;
    /**
     * How long a statement may wait for its answer before the connection is dropped: a server
     * that stopped answering (frozen, partitioned without a reset) otherwise holds the caller
     * on a pooled connection for ever. Unset: no limit.
     */
    queryTimeoutMs?: number;
  } = {},
): PgPool {
  const pool = new (loadPg().Pool)({
    connectionString: url,
    max: options.max ?? 10,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
    ...(options.queryTimeoutMs ? { query_timeout: options.queryTimeoutMs } : {}),
  });
  pool.on('error', (error) => options.onIdleError?.(error));
  return pool;
}

/** Runs `fn` inside one transaction on one pooled client; rolls back on any error. */
export async function withPgTransaction<T>(pool: PgPool, fn: (client: PgClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A connection lost between two statements is reported as an 'error' event on the
  // checked-out client, which the pool does not listen to: unheard, it would crash the
  // process. The next statement fails on its own and rejects this transaction.
  let lost: Error | undefined;
  const onLost = (error: Error) => {
    lost = error;
  };
  client.on('error', onLost);
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A statement that timed out or lost its connection leaves the client mid-exchange:
    // no ROLLBACK on it (that would wait out another timeout), and it is not reused.
    if (isStoreUnreachable(error)) {
      lost ??= error as Error;
      throw error;
    }
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.off('error', onLost);
    // A broken connection is dropped rather than handed to the next caller.
    client.release(lost);
  }
}
