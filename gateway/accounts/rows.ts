/**
 * The rows both state adapters (SQLite, Postgres) store and the SQL they share, so the two
 * read and write the same columns the same way.
 */
import { randomBytes } from 'node:crypto';
import { parseStoredLimits } from '../core/key-limits.ts';
import { parseStoredScopes } from '../core/scopes.ts';
import type { Account, AccountSecrets, ApiKeyRecord, KeyPrincipal } from './model.ts';
import type { Dialect } from './sql.ts';

/** Version 1's accounts and sessions: one shape in both adapters, in each one's column types. */
export function accountsSchema(dialect: Dialect): string {
  return `CREATE TABLE accounts (
     id TEXT PRIMARY KEY,
     email TEXT NOT NULL UNIQUE,
     password_hash TEXT,
     admin ${dialect.booleanType} NOT NULL DEFAULT ${dialect.boolean(false)},
     created_at TEXT NOT NULL,
     disabled_at TEXT,
     oidc_subject TEXT UNIQUE,
     failed_sign_ins INTEGER NOT NULL DEFAULT 0,
     locked_until TEXT);
   CREATE TABLE sessions (
     id_hash ${dialect.blob} PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     csrf_token TEXT NOT NULL,
     created_at TEXT NOT NULL,
     expires_at TEXT NOT NULL);
   CREATE INDEX sessions_account ON sessions(account_id);`;
}

/** Limits live beside scopes; usage counters are per key, UTC day and quota name. */
export const LIMITS_V2 = `ALTER TABLE api_keys ADD COLUMN limits TEXT NOT NULL DEFAULT '{}';
   CREATE TABLE key_usage (
     key_id TEXT NOT NULL,
     day TEXT NOT NULL,
     name TEXT NOT NULL,
     used INTEGER NOT NULL,
     PRIMARY KEY (key_id, day, name))`;

/** One statement, so two gateways counting at once can never both take the last call. */
export const TAKE_QUOTA_SQL = `INSERT INTO key_usage (key_id, day, name, used) VALUES ($1, $2, $3, 1)
  ON CONFLICT (key_id, day, name) DO UPDATE SET used = key_usage.used + 1 WHERE key_usage.used < $4
  RETURNING used`;

export function newAccountId(): string {
  return `acct_${randomBytes(9).toString('base64url')}`;
}

export interface AccountRow {
  id: string;
  email: string;
  password_hash: string | null;
  admin: number;
  created_at: string;
  disabled_at: string | null;
  oidc_subject: string | null;
  failed_sign_ins: number;
  locked_until: string | null;
}

export interface KeyRow {
  id: string;
  label: string;
  account_id: string;
  email: string;
  scopes: string;
  limits: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

export function accountFromRow(row: AccountRow): AccountSecrets {
  return {
    id: row.id,
    email: row.email,
    admin: Boolean(row.admin),
    createdAt: row.created_at,
    disabledAt: row.disabled_at,
    oidcSubject: row.oidc_subject,
    hasPassword: row.password_hash !== null,
    passwordHash: row.password_hash,
    failedSignIns: Number(row.failed_sign_ins),
    lockedUntil: row.locked_until,
  };
}

export function publicAccount({
  passwordHash: _p,
  failedSignIns: _f,
  lockedUntil: _l,
  ...account
}: AccountSecrets): Account {
  return account;
}

export function keyFromRow(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    label: row.label,
    ownerId: row.account_id,
    owner: row.email,
    scopes: parseStoredScopes(row.scopes),
    limits: parseStoredLimits(row.limits),
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
  };
}

export const KEY_COLUMNS = `k.id, k.label, k.account_id, a.email, k.scopes, k.limits, k.created_at, k.last_used_at, k.expires_at, k.revoked_at
  FROM api_keys k JOIN accounts a ON a.id = k.account_id`;

/**
 * A rotated key's previous secrets, each admitted until its own valid_until: clients move
 * to the new secret within the grace period without a failed request.
 */
export function graceSecretsSchema(blobType: 'BLOB' | 'BYTEA'): string {
  return `CREATE TABLE key_grace_secrets (
     key_hash ${blobType} PRIMARY KEY,
     key_id TEXT NOT NULL,
     valid_until TEXT NOT NULL);
   CREATE INDEX key_grace_secrets_key ON key_grace_secrets(key_id)`;
}

/** A secret is either a key's current one or a previous one still in its grace period. */
export const PRINCIPAL_SQL = `SELECT k.id, k.account_id, k.revoked_at, k.expires_at, k.scopes, k.limits,
     a.disabled_at, CAST(NULL AS TEXT) AS grace_until
   FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_hash = $1
   UNION ALL
   SELECT k.id, k.account_id, k.revoked_at, k.expires_at, k.scopes, k.limits, a.disabled_at, g.valid_until
   FROM key_grace_secrets g JOIN api_keys k ON k.id = g.key_id JOIN accounts a ON a.id = k.account_id
   WHERE g.key_hash = $1`;

export interface PrincipalRow {
  id: string;
  account_id: string;
  revoked_at: string | null;
  expires_at: string | null;
  scopes: string;
  limits: string;
  disabled_at: string | null;
  grace_until: string | null;
}

export function principalFromRow(row: PrincipalRow): KeyPrincipal {
  return {
    id: row.id,
    ownerId: row.account_id,
    revoked: row.revoked_at !== null,
    ownerDisabled: row.disabled_at !== null,
    expiresAt: row.expires_at,
    scopes: parseStoredScopes(row.scopes),
    limits: parseStoredLimits(row.limits),
    ...(row.grace_until === null ? {} : { graceUntil: row.grace_until }),
  };
}

/** What `keys prune` removes: keys that can never work again. ISO strings compare as times. */
export const PRUNABLE_WHERE = 'k.revoked_at IS NOT NULL OR (k.expires_at IS NOT NULL AND k.expires_at <= $1)';
