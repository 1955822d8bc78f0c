/**
 * The accounts queries are written once, as generators that yield each statement to a
 * driver and receive its result: the SQLite driver answers synchronously (the keys CLI and
 * tests need a synchronous store), the Postgres driver asynchronously, and both run the
 * same steps in the same order. SQL uses Postgres placeholders ($1, $2); the SQLite driver
 * rewrites them. Whatever else differs between the two is named in Dialect.
 */

export type Step =
  | { do: 'rows'; sql: string; params: unknown[] }
  | { do: 'run'; sql: string; params: unknown[] }
  | { do: 'transaction'; body: () => Op<unknown> };

/** A query program: yields steps, receives each step's answer, returns its result. */
// biome-ignore lint/suspicious/noExplicitAny: each step's answer is typed by the helper that yields it
export type Op<T> = Generator<Step, T, any>;

/** The rows a statement returns. */
export function* rows<T>(sql: string, params: unknown[] = []): Op<T[]> {
  return (yield { do: 'rows', sql, params }) as T[];
}

/** The first row a statement returns, if any. */
export function* row<T>(sql: string, params: unknown[] = []): Op<T | undefined> {
  const found: T[] = yield* rows<T>(sql, params);
  return found[0];
}

/** How many rows a statement changed. */
export function* run(sql: string, params: unknown[] = []): Op<number> {
  return (yield { do: 'run', sql, params }) as number;
}

/** Runs body's steps in one transaction: all of them take effect, or none. */
export function* transaction<T>(body: () => Op<T>): Op<T> {
  return (yield { do: 'transaction', body }) as T;
}

/** What differs between the two engines once the queries are shared. */
export interface Dialect {
  readonly kind: 'sqlite' | 'postgres';
  /** A boolean column's value: SQLite stores 0 or 1, Postgres a BOOLEAN. */
  boolean(value: boolean): number | boolean;
  /**
   * Locks the rows of table `alias` a transaction reads before it changes them; a SQLite
   * write transaction holds the whole file, so it needs nothing.
   */
  lockRows(alias: string): string;
  /** The column type of a hashed secret. */
  readonly blob: 'BLOB' | 'BYTEA';
  /** The column type of a flag: SQLite has no BOOLEAN. */
  readonly booleanType: 'INTEGER' | 'BOOLEAN';
}

export const SQLITE: Dialect = {
  kind: 'sqlite',
  boolean: (value) => (value ? 1 : 0),
  lockRows: () => '',
  blob: 'BLOB',
  booleanType: 'INTEGER',
};

export const POSTGRES: Dialect = {
  kind: 'postgres',
  boolean: (value) => value,
  lockRows: (alias) => ` FOR UPDATE OF ${alias}`,
  blob: 'BYTEA',
  booleanType: 'BOOLEAN',
};
