/**
 * The embedded adapter: one SQLite file in DATA_DIR holding accounts, sessions and key
 * hashes, never keys. better-sqlite3 answers synchronously, so the queries run to the end
 * in one turn and a transaction is never interleaved with another caller's statements.
 */
import type { Statement } from 'better-sqlite3';
import { openSqlite, runSqliteMigrations, type SqliteDatabase } from '../store/index.ts';
import { accountsSchema, graceSecretsSchema, LIMITS_V2 } from './rows.ts';
import { type Op, SQLITE, type Step } from './sql.ts';
import { SqlStateStore } from './sql-store.ts';

/** Keys minted before accounts existed had no owner; they had full access and keep it. */
const ACCOUNTS_V1 = `CREATE TABLE IF NOT EXISTS api_keys (
     id TEXT PRIMARY KEY, key_hash BLOB NOT NULL UNIQUE, label TEXT NOT NULL, owner TEXT,
     created_at TEXT NOT NULL, last_used_at TEXT, revoked_at TEXT);
   ${accountsSchema(SQLITE)}
   ALTER TABLE api_keys ADD COLUMN account_id TEXT REFERENCES accounts(id);
   ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT '{}';
   ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
   CREATE INDEX api_keys_account ON api_keys(account_id);`;

interface Prepared {
  statement: Statement;
  /** SQLite's `?` takes one parameter per occurrence: the $n each occurrence names, in order. */
  order: number[];
}

export class SqliteStateStore extends SqlStateStore {
  protected readonly db: SqliteDatabase;
  private readonly prepared = new Map<string, Prepared>();

  constructor(file: string) {
    super(SQLITE);
    this.db = openSqlite(file);
    runSqliteMigrations(this.db, 'accounts', [
      {
        version: 1,
        name: 'accounts, sessions; keys gain an owner, scopes and expiry',
        up: (db) => {
          db.exec(ACCOUNTS_V1);
          // Keys minted before accounts existed belong to the operator account.
          const operator = this.runSync(this.queries.operatorAccount());
          db.prepare('UPDATE api_keys SET account_id = ? WHERE account_id IS NULL').run(operator.id);
        },
      },
      { version: 2, name: 'per-key limits and daily quota usage', up: LIMITS_V2 },
      { version: 3, name: 'previous secrets of rotated keys', up: graceSecretsSchema(SQLITE.blob) },
    ]);
  }

  protected async exec<T>(op: Op<T>): Promise<T> {
    return this.runSync(op);
  }

  /** Runs a query program to its end before returning, for callers that cannot wait. */
  protected runSync<T>(op: Op<T>): T {
    let next = op.next();
    while (!next.done) next = op.next(this.answer(next.value));
    return next.value;
  }

  private answer(step: Step): unknown {
    if (step.do === 'transaction') return this.db.transaction(() => this.runSync(step.body()))();
    const { statement, order } = this.prepare(step.sql);
    const params = order.map((n) => step.params[n - 1]);
    return step.do === 'rows' ? statement.all(...params) : statement.run(...params).changes;
  }

  private prepare(sql: string): Prepared {
    let prepared = this.prepared.get(sql);
    if (!prepared) {
      const order = [...sql.matchAll(/\$(\d+)/g)].map((match) => Number(match[1]));
      prepared = { statement: this.db.prepare(sql.replace(/\$\d+/g, '?')), order };
      this.prepared.set(sql, prepared);
    }
    return prepared;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
