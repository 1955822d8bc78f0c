/**
 * The shared adapter: accounts, sessions and key hashes in Postgres (DATABASE_URL), so
 * several gateway hosts see the same keys, sign-ins and lockouts. Same columns and the
 * same ISO-string timestamps as the SQLite adapter, so both behave identically.
 */
import { generateApiKey, generateApiKeyId, hashApiKey } from '../core/api-key.ts';
import type { KeyLimits } from '../core/key-limits.ts';
import { createPgPool, type PgPool, runPgMigrations, withPgTransaction } from '../store/index.ts';
import {
  type Account,
  type AccountSecrets,
  type ApiKeyRecord,
  type CreatedApiKey,
  type KeyPrincipal,
  type NewAccount,
  type NewApiKey,
  normalizeEmail,
  OPERATOR_EMAIL,
  type Session,
  type StateStore,
} from './model.ts';
import {
  accountFromRow,
  graceSecretsSchema,
  KEY_COLUMNS,
  keyFromRow,
  LIMITS_V2,
  newAccountId,
  PRINCIPAL_SQL,
  PRUNABLE_WHERE,
  principalFromRow,
  publicAccount,
  TAKE_QUOTA_SQL,
} from './rows.ts';

const SCHEMA_V1 = `
CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT,
  admin BOOLEAN NOT NULL DEFAULT FALSE,
  created_at TEXT NOT NULL,
  disabled_at TEXT,
  oidc_subject TEXT UNIQUE,
  failed_sign_ins INTEGER NOT NULL DEFAULT 0,
  locked_until TEXT);
CREATE TABLE sessions (
  id_hash BYTEA PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  csrf_token TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL);
CREATE INDEX sessions_account ON sessions(account_id);
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

// biome-ignore lint/suspicious/noExplicitAny: rows come back untyped from pg and are mapped by the shared row readers
type Row = any;

export class PostgresStateStore implements StateStore {
  readonly kind = 'postgres' as const;

  private constructor(private readonly pool: PgPool) {}

  static async connect(url: string): Promise<PostgresStateStore> {
    const pool = createPgPool(url, { max: 5 });
    try {
      await runPgMigrations(pool, 'accounts', [
        { version: 1, name: 'accounts, sessions and api keys', up: SCHEMA_V1 },
        { version: 2, name: 'per-key limits and daily quota usage', up: LIMITS_V2 },
        { version: 3, name: 'previous secrets of rotated keys', up: graceSecretsSchema('BYTEA') },
      ]);
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new PostgresStateStore(pool);
  }

  private async rows(sql: string, params: unknown[] = []): Promise<Row[]> {
    return (await this.pool.query(sql, params)).rows;
  }

  private async account(column: 'id' | 'email' | 'oidc_subject', value: string) {
    const [row] = await this.rows(`SELECT * FROM accounts WHERE ${column} = $1`, [value]);
    return row ? accountFromRow(row) : undefined;
  }

  async createAccount(input: NewAccount): Promise<Account> {
    const [row] = await this.rows(
      `INSERT INTO accounts (id, email, password_hash, admin, created_at, oidc_subject)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
      [
        newAccountId(),
        normalizeEmail(input.email),
        input.passwordHash,
        input.admin,
        new Date().toISOString(),
        input.oidcSubject ?? null,
      ],
    );
    return publicAccount(accountFromRow(row));
  }
  accountByEmail(email: string): Promise<AccountSecrets | undefined> {
    return this.account('email', normalizeEmail(email));
  }
  accountById(id: string) {
    return this.account('id', id);
  }
  accountByOidcSubject(subject: string) {
    return this.account('oidc_subject', subject);
  }
  async listAccounts(): Promise<Account[]> {
    const rows = await this.rows('SELECT * FROM accounts ORDER BY created_at, id');
    return rows.map((row) => publicAccount(accountFromRow(row)));
  }
  async setAccountDisabled(id: string, disabled: boolean): Promise<boolean> {
    const result = await this.pool.query('UPDATE accounts SET disabled_at = $1 WHERE id = $2', [
      disabled ? new Date().toISOString() : null,
      id,
    ]);
    return (result.rowCount ?? 0) > 0;
  }
  async setAccountAdmin(id: string, admin: boolean): Promise<boolean> {
    const result = await this.pool.query('UPDATE accounts SET admin = $1 WHERE id = $2', [admin, id]);
    return (result.rowCount ?? 0) > 0;
  }
  async linkOidcSubject(id: string, subject: string): Promise<void> {
    await this.pool.query('UPDATE accounts SET oidc_subject = $1 WHERE id = $2', [subject, id]);
  }
  async setPasswordHash(id: string, passwordHash: string): Promise<void> {
    await this.pool.query(
      'UPDATE accounts SET password_hash = $1, failed_sign_ins = 0, locked_until = NULL WHERE id = $2',
      [passwordHash, id],
    );
  }
  async recordSignInFailure(id: string, lockedUntil: string | null): Promise<number> {
    const [row] = await this.rows(
      `UPDATE accounts SET failed_sign_ins = failed_sign_ins + 1, locked_until = COALESCE($1, locked_until)
       WHERE id = $2 RETURNING failed_sign_ins`,
      [lockedUntil, id],
    );
    return row ? Number(row.failed_sign_ins) : 0;
  }
  async clearSignInFailures(id: string): Promise<void> {
    await this.pool.query('UPDATE accounts SET failed_sign_ins = 0, locked_until = NULL WHERE id = $1', [id]);
  }
  async operatorAccount(): Promise<Account> {
    // Hosts starting together may both try: the unique email makes one insert win.
    await this.pool.query(
      `INSERT INTO accounts (id, email, password_hash, admin, created_at) VALUES ($1, $2, NULL, FALSE, $3)
       ON CONFLICT (email) DO NOTHING`,
      [newAccountId(), OPERATOR_EMAIL, new Date().toISOString()],
    );
    return publicAccount((await this.account('email', OPERATOR_EMAIL)) as AccountSecrets);
  }

  async createSession(idHash: Buffer, session: Session): Promise<void> {
    await this.pool.query(
      'INSERT INTO sessions (id_hash, account_id, csrf_token, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
      [idHash, session.accountId, session.csrfToken, session.createdAt, session.expiresAt],
    );
  }
  async sessionByHash(idHash: Buffer): Promise<Session | undefined> {
    const [row] = await this.rows(
      'SELECT account_id, csrf_token, created_at, expires_at FROM sessions WHERE id_hash = $1',
      [idHash],
    );
    return row
      ? {
          accountId: row.account_id,
          csrfToken: row.csrf_token,
          createdAt: row.created_at,
          expiresAt: row.expires_at,
        }
      : undefined;
  }
  async deleteSession(idHash: Buffer): Promise<void> {
    await this.pool.query('DELETE FROM sessions WHERE id_hash = $1', [idHash]);
  }
  async purgeExpiredSessions(now: Date): Promise<void> {
    await this.pool.query('DELETE FROM sessions WHERE expires_at <= $1', [now.toISOString()]);
  }
  async deleteSessionsOf(accountId: string): Promise<void> {
    await this.pool.query('DELETE FROM sessions WHERE account_id = $1', [accountId]);
  }

  async createKey(input: NewApiKey): Promise<CreatedApiKey> {
    const key = generateApiKey();
    const id = generateApiKeyId();
    await this.pool.query(
      `INSERT INTO api_keys (id, key_hash, label, account_id, scopes, created_at, expires_at, limits)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        id,
        hashApiKey(key),
        input.label,
        input.ownerId,
        JSON.stringify(input.scopes),
        new Date().toISOString(),
        input.expiresAt,
        JSON.stringify(input.limits ?? {}),
      ],
    );
    return { ...((await this.keyById(id)) as ApiKeyRecord), key };
  }
  async listKeys(ownerId?: string): Promise<ApiKeyRecord[]> {
    const rows =
      ownerId === undefined
        ? await this.rows(`SELECT ${KEY_COLUMNS} ORDER BY k.created_at, k.id`)
        : await this.rows(`SELECT ${KEY_COLUMNS} WHERE k.account_id = $1 ORDER BY k.created_at, k.id`, [
            ownerId,
          ]);
    return rows.map(keyFromRow);
  }
  async keyById(id: string): Promise<ApiKeyRecord | undefined> {
    const [row] = await this.rows(`SELECT ${KEY_COLUMNS} WHERE k.id = $1`, [id]);
    return row ? keyFromRow(row) : undefined;
  }
  async revokeKey(id: string, ownerId?: string): Promise<boolean> {
    const now = new Date().toISOString();
    const result =
      ownerId === undefined
        ? await this.pool.query('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2', [
            now,
            id,
          ])
        : await this.pool.query(
            'UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2 AND account_id = $3',
            [now, id, ownerId],
          );
    return (result.rowCount ?? 0) > 0;
  }
  async keyByHash(hash: Buffer): Promise<KeyPrincipal | undefined> {
    const [row] = await this.rows(PRINCIPAL_SQL, [hash, hash]);
    return row ? principalFromRow(row) : undefined;
  }
  async rotateKey(id: string, graceUntil: string | null): Promise<CreatedApiKey | undefined> {
    const key = generateApiKey();
    const rotated = await withPgTransaction(this.pool, async (client) => {
      const { rows } = await client.query(
        'SELECT key_hash FROM api_keys WHERE id = $1 AND revoked_at IS NULL FOR UPDATE',
        [id],
      );
      if (rows.length === 0) return false;
      if (graceUntil !== null) {
        await client.query(
          'INSERT INTO key_grace_secrets (key_hash, key_id, valid_until) VALUES ($1, $2, $3)',
          [rows[0].key_hash, id, graceUntil],
        );
      }
      await client.query('UPDATE api_keys SET key_hash = $1 WHERE id = $2', [hashApiKey(key), id]);
      return true;
    });
    return rotated ? { ...((await this.keyById(id)) as ApiKeyRecord), key } : undefined;
  }
  async pruneKeys(now: Date): Promise<ApiKeyRecord[]> {
    const at = now.toISOString();
    return withPgTransaction(this.pool, async (client) => {
      const { rows } = await client.query(
        `SELECT ${KEY_COLUMNS} WHERE ${PRUNABLE_WHERE} ORDER BY k.created_at, k.id FOR UPDATE OF k`,
        [at],
      );
      const ids = rows.map((row: Row) => row.id as string);
      await client.query('DELETE FROM key_usage WHERE key_id = ANY($1)', [ids]);
      await client.query('DELETE FROM key_grace_secrets WHERE key_id = ANY($1) OR valid_until <= $2', [
        ids,
        at,
      ]);
      await client.query('DELETE FROM api_keys WHERE id = ANY($1)', [ids]);
      return rows.map(keyFromRow);
    });
  }
  async touchKey(id: string, at: Date): Promise<void> {
    await this.pool.query('UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [at.toISOString(), id]);
  }
  async setKeyLimits(id: string, limits: KeyLimits): Promise<ApiKeyRecord | undefined> {
    const result = await this.pool.query('UPDATE api_keys SET limits = $1 WHERE id = $2', [
      JSON.stringify(limits),
      id,
    ]);
    return (result.rowCount ?? 0) > 0 ? this.keyById(id) : undefined;
  }
  async takeQuota(keyId: string, day: string, name: string, limit: number) {
    const [row] = await this.rows(TAKE_QUOTA_SQL, [keyId, day, name, limit]);
    if (row) return { ok: true, used: Number(row.used) };
    return { ok: false, used: (await this.quotaUsage(keyId, day))[name] ?? limit };
  }
  async quotaUsage(keyId: string, day: string): Promise<Record<string, number>> {
    const rows = await this.rows('SELECT name, used FROM key_usage WHERE key_id = $1 AND day = $2', [
      keyId,
      day,
    ]);
    return Object.fromEntries(rows.map((row) => [row.name, Number(row.used)]));
  }
  async close(): Promise<void> {
    await this.pool.end();
  }
}
