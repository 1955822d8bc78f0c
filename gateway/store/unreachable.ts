/**
 * Telling "the store did not answer" from every other failure, for the answers that differ:
 * a key lookup that could not reach the store is a 503 naming it (not a 500), and a memory
 * call is STORE_UNAVAILABLE. A store that answered with an error (a bad statement, a
 * constraint) is not unreachable and keeps its own handling.
 */

/** Socket errors, Postgres's "admin shutdown"/"starting up"/"cannot connect now" and connection-exception classes, SQLite busy. */
const CODES =
  /^(ECONN(REFUSED|RESET|ABORTED)|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|57P0[1-5]|08...|53300|SQLITE_BUSY)$/;

/**
 * The `pg` driver's own errors carry no code: a connection lost mid-query, a pool that could
 * not connect in time, a client whose connection already failed.
 */
const PG_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection terminated due to connection timeout|Query read timeout)/;

export function isStoreUnreachable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && CODES.test(code)) return true;
  // A pool's connect failure may arrive wrapped (AggregateError from a dual-stack connect).
  const errors = (error as { errors?: unknown }).errors;
  if (Array.isArray(errors) && errors.some(isStoreUnreachable)) return true;
  return typeof message === 'string' && PG_MESSAGES.test(message);
}

/** The state store did not answer a request's key lookup; the request gets 503 naming it. */
export class StateStoreUnavailableError extends Error {
  override readonly name = 'StateStoreUnavailableError';

  constructor(
    readonly store: 'postgres' | 'sqlite',
    options: { cause: unknown },
  ) {
    super(`the ${store === 'postgres' ? 'Postgres' : 'SQLite'} state store did not answer`, options);
  }
}
