import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { generateApiKey, generateApiKeyId, hashApiKey } from './api-key.ts';

export interface ApiKeyRecord {
  id: string;
  label: string;
  owner: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface CreatedApiKey extends ApiKeyRecord {
  /** The only time the key itself exists outside its owner's hands. */
  key: string;
}

interface Row {
  id: string;
  label: string;
  owner: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

function toRecord(row: Row): ApiKeyRecord {
  return {
    id: row.id,
    label: row.label,
    owner: row.owner,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

/** The embedded key store: a SQLite file holding SHA-256 hashes of keys, never the keys. */
export class ApiKeyStore {
  private readonly db: Database.Database;
  private readonly byHash: Database.Statement<[Buffer], Pick<Row, 'id' | 'revoked_at'>>;
  private readonly touchStatement: Database.Statement<[string, string]>;

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(`CREATE TABLE IF NOT EXISTS api_keys (
      id TEXT PRIMARY KEY,
      key_hash BLOB NOT NULL UNIQUE,
      label TEXT NOT NULL,
      owner TEXT,
      created_at TEXT NOT NULL,
      last_used_at TEXT,
      revoked_at TEXT
    )`);
    this.byHash = this.db.prepare('SELECT id, revoked_at FROM api_keys WHERE key_hash = ?');
    this.touchStatement = this.db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');
  }

  create(label: string, owner: string | null = null): CreatedApiKey {
    const key = generateApiKey();
    const record: ApiKeyRecord = {
      id: generateApiKeyId(),
      label,
      owner,
      createdAt: new Date().toISOString(),
      lastUsedAt: null,
      revokedAt: null,
    };
    this.db
      .prepare('INSERT INTO api_keys (id, key_hash, label, owner, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(record.id, hashApiKey(key), label, owner, record.createdAt);
    return { ...record, key };
  }

  list(): ApiKeyRecord[] {
    const rows = this.db
      .prepare(
        'SELECT id, label, owner, created_at, last_used_at, revoked_at FROM api_keys ORDER BY created_at',
      )
      .all() as Row[];
    return rows.map(toRecord);
  }

  /** False when no such key exists; revoking twice keeps the first revocation time. */
  revoke(id: string): boolean {
    const result = this.db
      .prepare('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?')
      .run(new Date().toISOString(), id);
    return result.changes > 0;
  }

  findByHash(hash: Buffer): { id: string; revoked: boolean } | undefined {
    const row = this.byHash.get(hash);
    return row ? { id: row.id, revoked: row.revoked_at !== null } : undefined;
  }

  touch(id: string, at: Date): void {
    this.touchStatement.run(at.toISOString(), id);
  }

  close(): void {
    this.db.close();
  }
}
