import type Database from 'better-sqlite3';
import { generateApiKey, generateApiKeyId, hashApiKey } from '../core/api-key.ts';
import type { KeyLimits } from '../core/key-limits.ts';
import { openSqlite, runSqliteMigrations } from '../store/index.ts';
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
  type AccountRow,
  accountFromRow,
  graceSecretsSchema,
  KEY_COLUMNS,
  type KeyRow,
  keyFromRow,
  LIMITS_V2,
  newAccountId,
  PRINCIPAL_SQL,
  PRUNABLE_WHERE,
  type PrincipalRow,
  principalFromRow,
  publicAccount,
  TAKE_QUOTA_SQL,
} from './rows.ts';

/** Keys minted before accounts existed had no owner; they had full access and keep it. */
const ACCOUNTS_V1 = `CREATE TABLE IF NOT EXISTS api_keys (
     id TEXT PRIMARY KEY, key_hash BLOB NOT NULL UNIQUE, label TEXT NOT NULL, owner TEXT,
     created_at TEXT NOT NULL, last_used_at TEXT, revoked_at TEXT);
   CREATE TABLE accounts (
     id TEXT PRIMARY KEY,
     email TEXT NOT NULL UNIQUE,
     password_hash TEXT,
     admin INTEGER NOT NULL DEFAULT 0,
     created_at TEXT NOT NULL,
     disabled_at TEXT,
     oidc_subject TEXT UNIQUE,
     failed_sign_ins INTEGER NOT NULL DEFAULT 0,
     locked_until TEXT);
   CREATE TABLE sessions (
     id_hash BLOB PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     csrf_token TEXT NOT NULL,
     created_at TEXT NOT NULL,
     expires_at TEXT NOT NULL);
   CREATE INDEX sessions_account ON sessions(account_id);
   ALTER TABLE api_keys ADD COLUMN account_id TEXT REFERENCES accounts(id);
   ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT '{}';
   ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
   CREATE INDEX api_keys_account ON api_keys(account_id);`;

/** The shared SQL is written with Postgres placeholders; each occurrence takes its own parameter here. */
function sqlite(sql: string): string {
  return sql.replace(/\$\d+/g, '?');
}

/** The embedded adapter: one SQLite file in DATA_DIR holding accounts, sessions and key hashes, never keys. */
export class SqliteStateStore implements StateStore {
  readonly kind = 'sqlite' as const;
  protected readonly db: Database.Database;
  private readonly byHash: Database.Statement<[Buffer, Buffer], PrincipalRow>;
  private readonly touchStatement: Database.Statement<[string, string]>;

  constructor(file: string) {
    this.db = openSqlite(file);
    runSqliteMigrations(this.db, 'accounts', [
      {
        version: 1,
        name: 'accounts, sessions; keys gain an owner, scopes and expiry',
        up: (db) => {
          db.exec(ACCOUNTS_V1);
          // Keys minted before accounts existed belong to the operator account.
          const operator = this.operatorAccountSync();
          db.prepare('UPDATE api_keys SET account_id = ? WHERE account_id IS NULL').run(operator.id);
        },
      },
      { version: 2, name: 'per-key limits and daily quota usage', up: LIMITS_V2 },
      { version: 3, name: 'previous secrets of rotated keys', up: graceSecretsSchema('BLOB') },
    ]);
    this.byHash = this.db.prepare(sqlite(PRINCIPAL_SQL));
    this.touchStatement = this.db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');
  }

  protected operatorAccountSync(): Account {
    const existing = this.accountRow('email', OPERATOR_EMAIL);
    if (existing) return publicAccount(existing);
    return this.createAccountSync({ email: OPERATOR_EMAIL, passwordHash: null, admin: false });
  }

  protected createAccountSync(input: NewAccount): Account {
    const row: AccountRow = {
      id: newAccountId(),
      email: normalizeEmail(input.email),
      password_hash: input.passwordHash,
      admin: input.admin ? 1 : 0,
      created_at: new Date().toISOString(),
      disabled_at: null,
      oidc_subject: input.oidcSubject ?? null,
      failed_sign_ins: 0,
      locked_until: null,
    };
    this.db
      .prepare(
        'INSERT INTO accounts (id, email, password_hash, admin, created_at, oidc_subject) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(row.id, row.email, row.password_hash, row.admin, row.created_at, row.oidc_subject);
    return publicAccount(accountFromRow(row));
  }

  private accountRow(column: 'id' | 'email' | 'oidc_subject', value: string): AccountSecrets | undefined {
    const row = this.db.prepare(`SELECT * FROM accounts WHERE ${column} = ?`).get(value) as
      | AccountRow
      | undefined;
    return row ? accountFromRow(row) : undefined;
  }

  protected createKeySync(input: NewApiKey): CreatedApiKey {
    const key = generateApiKey();
    const id = generateApiKeyId();
    const createdAt = new Date().toISOString();
    this.db
      .prepare(
        'INSERT INTO api_keys (id, key_hash, label, account_id, scopes, limits, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        id,
        hashApiKey(key),
        input.label,
        input.ownerId,
        JSON.stringify(input.scopes),
        JSON.stringify(input.limits ?? {}),
        createdAt,
        input.expiresAt,
      );
    const record = this.keyByIdSync(id) as ApiKeyRecord;
    return { ...record, key };
  }

  protected listKeysSync(ownerId?: string): ApiKeyRecord[] {
    const rows = (
      ownerId === undefined
        ? this.db.prepare(`SELECT ${KEY_COLUMNS} ORDER BY k.created_at, k.id`).all()
        : this.db
            .prepare(`SELECT ${KEY_COLUMNS} WHERE k.account_id = ? ORDER BY k.created_at, k.id`)
            .all(ownerId)
    ) as KeyRow[];
    return rows.map(keyFromRow);
  }

  protected keyByIdSync(id: string): ApiKeyRecord | undefined {
    const row = this.db.prepare(`SELECT ${KEY_COLUMNS} WHERE k.id = ?`).get(id) as KeyRow | undefined;
    return row ? keyFromRow(row) : undefined;
  }

  protected revokeKeySync(id: string, ownerId?: string): boolean {
    const now = new Date().toISOString();
    const result =
      ownerId === undefined
        ? this.db
            .prepare('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?')
            .run(now, id)
        : this.db
            .prepare(
              'UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND account_id = ?',
            )
            .run(now, id, ownerId);
    return result.changes > 0;
  }

  protected keyByHashSync(hash: Buffer): KeyPrincipal | undefined {
    const row = this.byHash.get(hash, hash);
    return row ? principalFromRow(row) : undefined;
  }

  protected rotateKeySync(id: string, graceUntil: string | null): CreatedApiKey | undefined {
    const key = generateApiKey();
    const rotated = this.db.transaction(() => {
      const current = this.db
        .prepare('SELECT key_hash FROM api_keys WHERE id = ? AND revoked_at IS NULL')
        .get(id) as { key_hash: Buffer } | undefined;
      if (!current) return false;
      if (graceUntil !== null) {
        this.db
          .prepare('INSERT INTO key_grace_secrets (key_hash, key_id, valid_until) VALUES (?, ?, ?)')
          .run(current.key_hash, id, graceUntil);
      }
      this.db.prepare('UPDATE api_keys SET key_hash = ? WHERE id = ?').run(hashApiKey(key), id);
      return true;
    })();
    return rotated ? { ...(this.keyByIdSync(id) as ApiKeyRecord), key } : undefined;
  }

  protected pruneKeysSync(now: Date): ApiKeyRecord[] {
    const at = now.toISOString();
    return this.db.transaction(() => {
      const pruned = (
        this.db
          .prepare(`SELECT ${KEY_COLUMNS} WHERE ${sqlite(PRUNABLE_WHERE)} ORDER BY k.created_at, k.id`)
          .all(at) as KeyRow[]
      ).map(keyFromRow);
      for (const { id } of pruned) {
        this.db.prepare('DELETE FROM key_usage WHERE key_id = ?').run(id);
        this.db.prepare('DELETE FROM key_grace_secrets WHERE key_id = ?').run(id);
        this.db.prepare('DELETE FROM api_keys WHERE id = ?').run(id);
      }
      this.db.prepare('DELETE FROM key_grace_secrets WHERE valid_until <= ?').run(at);
      return pruned;
    })();
  }

  protected touchKeySync(id: string, at: Date): void {
    this.touchStatement.run(at.toISOString(), id);
  }

  async createAccount(input: NewAccount): Promise<Account> {
    return this.createAccountSync(input);
  }
  async accountByEmail(email: string) {
    return this.accountRow('email', normalizeEmail(email));
  }
  async accountById(id: string) {
    return this.accountRow('id', id);
  }
  async accountByOidcSubject(subject: string) {
    return this.accountRow('oidc_subject', subject);
  }
  async listAccounts(): Promise<Account[]> {
    const rows = this.db.prepare('SELECT * FROM accounts ORDER BY created_at, id').all() as AccountRow[];
    return rows.map((row) => publicAccount(accountFromRow(row)));
  }
  async setAccountDisabled(id: string, disabled: boolean): Promise<boolean> {
    const result = this.db
      .prepare('UPDATE accounts SET disabled_at = ? WHERE id = ?')
      .run(disabled ? new Date().toISOString() : null, id);
    return result.changes > 0;
  }
  async setAccountAdmin(id: string, admin: boolean): Promise<boolean> {
    return this.db.prepare('UPDATE accounts SET admin = ? WHERE id = ?').run(admin ? 1 : 0, id).changes > 0;
  }
  async linkOidcSubject(id: string, subject: string): Promise<void> {
    this.db.prepare('UPDATE accounts SET oidc_subject = ? WHERE id = ?').run(subject, id);
  }
  async setPasswordHash(id: string, passwordHash: string): Promise<void> {
    this.db
      .prepare('UPDATE accounts SET password_hash = ?, failed_sign_ins = 0, locked_until = NULL WHERE id = ?')
      .run(passwordHash, id);
  }
  async recordSignInFailure(id: string, lockedUntil: string | null): Promise<number> {
    const row = this.db
      .prepare(
        'UPDATE accounts SET failed_sign_ins = failed_sign_ins + 1, locked_until = COALESCE(?, locked_until) WHERE id = ? RETURNING failed_sign_ins',
      )
      .get(lockedUntil, id) as { failed_sign_ins: number } | undefined;
    return row?.failed_sign_ins ?? 0;
  }
  async clearSignInFailures(id: string): Promise<void> {
    this.db.prepare('UPDATE accounts SET failed_sign_ins = 0, locked_until = NULL WHERE id = ?').run(id);
  }
  async operatorAccount(): Promise<Account> {
    return this.operatorAccountSync();
  }

  async createSession(idHash: Buffer, session: Session): Promise<void> {
    this.db
      .prepare(
        'INSERT INTO sessions (id_hash, account_id, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
      )
      .run(idHash, session.accountId, session.csrfToken, session.createdAt, session.expiresAt);
  }
  async sessionByHash(idHash: Buffer): Promise<Session | undefined> {
    const row = this.db
      .prepare('SELECT account_id, csrf_token, created_at, expires_at FROM sessions WHERE id_hash = ?')
      .get(idHash) as
      | { account_id: string; csrf_token: string; created_at: string; expires_at: string }
      | undefined;
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
    this.db.prepare('DELETE FROM sessions WHERE id_hash = ?').run(idHash);
  }
  async purgeExpiredSessions(now: Date): Promise<void> {
    this.db.prepare('DELETE FROM sessions WHERE expires_at <= ?').run(now.toISOString());
  }
  async deleteSessionsOf(accountId: string): Promise<void> {
    this.db.prepare('DELETE FROM sessions WHERE account_id = ?').run(accountId);
  }

  async createKey(input: NewApiKey): Promise<CreatedApiKey> {
    return this.createKeySync(input);
  }
  async listKeys(ownerId?: string): Promise<ApiKeyRecord[]> {
    return this.listKeysSync(ownerId);
  }
  async keyById(id: string) {
    return this.keyByIdSync(id);
  }
  async revokeKey(id: string, ownerId?: string): Promise<boolean> {
    return this.revokeKeySync(id, ownerId);
  }
  async keyByHash(hash: Buffer): Promise<KeyPrincipal | undefined> {
    return this.keyByHashSync(hash);
  }
  async touchKey(id: string, at: Date): Promise<void> {
    this.touchKeySync(id, at);
  }
  async rotateKey(id: string, graceUntil: string | null): Promise<CreatedApiKey | undefined> {
    return this.rotateKeySync(id, graceUntil);
  }
  async pruneKeys(now: Date): Promise<ApiKeyRecord[]> {
    return this.pruneKeysSync(now);
  }
  protected setKeyLimitsSync(id: string, limits: KeyLimits): ApiKeyRecord | undefined {
    const result = this.db
      .prepare('UPDATE api_keys SET limits = ? WHERE id = ?')
      .run(JSON.stringify(limits), id);
    return result.changes > 0 ? this.keyByIdSync(id) : undefined;
  }
  async setKeyLimits(id: string, limits: KeyLimits): Promise<ApiKeyRecord | undefined> {
    return this.setKeyLimitsSync(id, limits);
  }
  async takeQuota(keyId: string, day: string, name: string, limit: number) {
    const row = this.takeQuotaStatement().get(keyId, day, name, limit) as { used: number } | undefined;
    if (row) return { ok: true, used: row.used };
    return { ok: false, used: (await this.quotaUsage(keyId, day))[name] ?? limit };
  }
  private takeQuotaCached: Database.Statement | undefined;
  private takeQuotaStatement(): Database.Statement {
    this.takeQuotaCached ??= this.db.prepare(sqlite(TAKE_QUOTA_SQL));
    return this.takeQuotaCached;
  }
  async quotaUsage(keyId: string, day: string): Promise<Record<string, number>> {
    const rows = this.db
      .prepare('SELECT name, used FROM key_usage WHERE key_id = ? AND day = ?')
      .all(keyId, day) as { name: string; used: number }[];
    return Object.fromEntries(rows.map((row) => [row.name, row.used]));
  }
  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
