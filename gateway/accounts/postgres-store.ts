/**
 * The shared adapter: accounts, sessions and key hashes in Postgres (DATABASE_URL), so
 * several gateway hosts see the same keys, sign-ins and lockouts. It runs the same queries
 * as the SQLite adapter over the same columns, so both behave identically.
 */
import {
  createPgPool,
  type PgClient,
  type PgPool,
  runPgMigrations,
  withPgTransaction,
} from '../store/index.ts';
import { accountsSchema, graceSecretsSchema, LIMITS_V2 } from './rows.ts';
import { type Op, POSTGRES } from './sql.ts';
import { SqlStateStore } from './sql-store.ts';

const SCHEMA_V1 = `${accountsSchema(POSTGRES)}
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  key_hash BYTEA NOT NULL UNIQUE,
  label TEXT NOT NULL,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  scopes TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  expires_at TEXT,
  revoked_at TEXT);
CREATE INDEX api_keys_account ON api_keys(account_id);`;

export class PostgresStateStore extends SqlStateStore {
  private constructor(private readonly pool: PgPool) {
    super(POSTGRES);
  }

  static async connect(url: string): Promise<PostgresStateStore> {
    // Key lookups, sessions and quota counts are single-row statements: 10 s is a frozen server.
    const pool = createPgPool(url, { max: 5, queryTimeoutMs: 10_000 });
    try {
      await runPgMigrations(pool, 'accounts', [
        { version: 1, name: 'accounts, sessions and api keys', up: SCHEMA_V1 },
        { version: 2, name: 'per-key limits and daily quota usage', up: LIMITS_V2 },
        { version: 3, name: 'previous secrets of rotated keys', up: graceSecretsSchema(POSTGRES.blob) },
      ]);
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new PostgresStateStore(pool);
  }

  protected exec<T>(op: Op<T>): Promise<T> {
    return this.execOn(this.pool, op);
  }

  /** Outside a transaction each statement takes any pooled connection; inside one, its own client. */
  private async execOn<T>(db: PgPool | PgClient, op: Op<T>): Promise<T> {
    let next = op.next();
    while (!next.done) {
      const step = next.value;
      let answer: unknown;
      if (step.do === 'transaction') {
        const body = step.body;
        answer = await withPgTransaction(this.pool, (client) => this.execOn(client, body()));
      } else {
        const result = await db.query(step.sql, step.params);
        answer = step.do === 'rows' ? result.rows : (result.rowCount ?? 0);
      }
      next = op.next(answer);
    }
    return next.value;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
