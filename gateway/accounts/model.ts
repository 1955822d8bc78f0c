/**
 * The shapes every state adapter (SQLite, Postgres) stores and returns. Timestamps are ISO
 * strings in UTC on both adapters so the two compare and sort the same way.
 */
import type { KeyLimits, QuotaTake } from '../core/key-limits.ts';
import type { KeyScopes } from '../core/scopes.ts';

export interface Account {
  id: string;
  email: string;
  admin: boolean;
  createdAt: string;
  disabledAt: string | null;
  /** Set for accounts first seen through single sign-on: issuer + subject, never the token. */
  oidcSubject: string | null;
  /** False for accounts that exist only to own keys (the operator) or sign in only through SSO. */
  hasPassword: boolean;
}

export interface AccountSecrets extends Account {
  passwordHash: string | null;
  failedSignIns: number;
  lockedUntil: string | null;
}

export interface NewAccount {
  email: string;
  passwordHash: string | null;
  admin: boolean;
  oidcSubject?: string | null;
}

export interface Session {
  accountId: string;
  csrfToken: string;
  createdAt: string;
  expiresAt: string;
}

export interface ApiKeyRecord {
  id: string;
  label: string;
  ownerId: string;
  /** The owning account's email, for listings. */
  owner: string;
  scopes: KeyScopes;
  limits: KeyLimits;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
}

export interface CreatedApiKey extends ApiKeyRecord {
  /** The only time the key itself exists outside its owner's hands. */
  key: string;
}

export interface NewApiKey {
  label: string;
  ownerId: string;
  scopes: KeyScopes;
  expiresAt: string | null;
  limits?: KeyLimits;
}

/** What the gateway needs to admit a request: never the key, only its verdict and limits. */
export interface KeyPrincipal {
  id: string;
  /** The owning account's id: named in the audit trail, never a secret. */
  ownerId: string;
  revoked: boolean;
  ownerDisabled: boolean;
  expiresAt: string | null;
  scopes: KeyScopes;
  limits: KeyLimits;
  /** Set when the secret presented is a rotated-out one: it is admitted until then. */
  graceUntil?: string;
}

/** The account that owns keys minted on the server without --owner; it cannot sign in. */
export const OPERATOR_EMAIL = 'operator';

/**
 * One interface, two adapters. Everything is async because the Postgres adapter is; the
 * SQLite adapter answers synchronously underneath.
 */
export interface StateStore {
  readonly kind: 'sqlite' | 'postgres';
  createAccount(input: NewAccount): Promise<Account>;
  accountByEmail(email: string): Promise<AccountSecrets | undefined>;
  accountById(id: string): Promise<AccountSecrets | undefined>;
  accountByOidcSubject(subject: string): Promise<AccountSecrets | undefined>;
  listAccounts(): Promise<Account[]>;
  setAccountDisabled(id: string, disabled: boolean): Promise<boolean>;
  /** False when no such account exists. */
  setAccountAdmin(id: string, admin: boolean): Promise<boolean>;
  linkOidcSubject(id: string, subject: string): Promise<void>;
  /** Replaces the password and clears any lockout. */
  setPasswordHash(id: string, passwordHash: string): Promise<void>;
  /** Counts a failed sign-in; lockedUntil (when given) starts a lockout. Returns the new count. */
  recordSignInFailure(id: string, lockedUntil: string | null): Promise<number>;
  clearSignInFailures(id: string): Promise<void>;
  /** The account that owns server-minted keys, created on first use. */
  operatorAccount(): Promise<Account>;

  createSession(idHash: Buffer, session: Session): Promise<void>;
  sessionByHash(idHash: Buffer): Promise<Session | undefined>;
  deleteSession(idHash: Buffer): Promise<void>;
  deleteSessionsOf(accountId: string): Promise<void>;
  /** Drops sessions that ended unused (their cookies expired in browsers that never returned). */
  purgeExpiredSessions(now: Date): Promise<void>;

  createKey(input: NewApiKey): Promise<CreatedApiKey>;
  /** Every key, or one account's keys. */
  listKeys(ownerId?: string): Promise<ApiKeyRecord[]>;
  keyById(id: string): Promise<ApiKeyRecord | undefined>;
  /** False when no such key (owned by ownerId, when given) exists. Revoking twice keeps the first time. */
  revokeKey(id: string, ownerId?: string): Promise<boolean>;
  keyByHash(hash: Buffer): Promise<KeyPrincipal | undefined>;
  touchKey(id: string, at: Date): Promise<void>;
  /**
   * Gives a live (unrevoked) key a new secret under the same id; the previous secret keeps
   * working until graceUntil (none: it stops at once). Undefined, and nothing changed, when
   * no live key has that id.
   */
  rotateKey(id: string, graceUntil: string | null): Promise<CreatedApiKey | undefined>;
  /**
   * Deletes every revoked key and every key expired at `now`, with their usage counts and
   * previous secrets, and previous secrets whose grace ended. Returns the keys deleted.
   */
  pruneKeys(now: Date): Promise<ApiKeyRecord[]>;
  /** Replaces a key's limits; undefined (and nothing changed) when no such key exists. */
  setKeyLimits(id: string, limits: KeyLimits): Promise<ApiKeyRecord | undefined>;
  /**
   * Counts one call against a key's daily quota, atomically across threads, processes and
   * hosts sharing the store; refuses (and counts nothing) once `limit` calls were counted.
   */
  takeQuota(keyId: string, day: string, name: string, limit: number): Promise<QuotaTake>;
  /** A key's counted calls on one UTC day (YYYY-MM-DD), by quota name. */
  quotaUsage(keyId: string, day: string): Promise<Record<string, number>>;

  close(): Promise<void>;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

// What a caller of the state store sees when it cannot be reached: the key check (auth) reads
// it here, as it reads everything of the store, through the accounts contract.
export { isStoreUnreachable, StateStoreUnavailableError } from '../store/unreachable.ts';
