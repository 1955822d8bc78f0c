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
    /**
     * Session settings sent in the connection's startup packet (`-c name=value`), so they
     * hold from a connection's first statement on; a `SET` sent on the pool's `connect`
     * event instead raced the caller's first query on the same client.
     */
    settings?: Record<string, string>;
  } = {},
): PgPool {
  const startup = sessionOptions(url, options.settings ?? {});
  const pool = new (loadPg().Pool)({
    connectionString: url,
    max: options.max ?? 10,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
    ...(options.queryTimeoutMs ? { query_timeout: options.queryTimeoutMs } : {}),
    ...(startup ? { options: startup } : {}),
  });
  pool.on('error', (error) => options.onIdleError?.(error));
  return pool;
}

/**
 * The startup `options` string: the URL's own `options` parameter (kept, it would otherwise
 * be replaced) followed by `settings`. Names and values are the caller's constants; a space
 * or backslash in a value is escaped as libpq's option parser expects.
 */
function sessionOptions(url: string, settings: Record<string, string>): string | undefined {
  let fromUrl: string | null = null;
  try {
    fromUrl = new URL(url).searchParams.get('options');
  } catch {}
  const own = Object.entries(settings).map(
    ([name, value]) => `-c ${name}=${value.replace(/([\\ ])/g, '\\$1')}`,
  );
  const all = [...(fromUrl ? [fromUrl] : []), ...own].join(' ');
  return all === '' ? undefined : all;
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
