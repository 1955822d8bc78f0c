/**
 * The StateStore both engines share: each call runs one of the shared queries through the
 * engine's driver. The SQLite and Postgres adapters add only their schema and driver.
 */
import type { KeyLimits, QuotaTake } from '../core/key-limits.ts';
import type {
  Account,
  AccountSecrets,
  ApiKeyRecord,
  CreatedApiKey,
  KeyPrincipal,
  NewAccount,
  NewApiKey,
  Session,
  StateStore,
} from './model.ts';
import { AccountQueries } from './queries.ts';
import type { Dialect, Op } from './sql.ts';

export abstract class SqlStateStore implements StateStore {
  readonly kind: Dialect['kind'];
  protected readonly queries: AccountQueries;

  constructor(dialect: Dialect) {
    this.kind = dialect.kind;
    this.queries = new AccountQueries(dialect);
  }

  /** Runs a query program on this engine. */
  protected abstract exec<T>(op: Op<T>): Promise<T>;
  abstract close(): Promise<void>;

  createAccount(input: NewAccount): Promise<Account> {
    return this.exec(this.queries.createAccount(input));
  }
  accountByEmail(email: string): Promise<AccountSecrets | undefined> {
    return this.exec(this.queries.accountByEmail(email));
  }
  accountById(id: string): Promise<AccountSecrets | undefined> {
    return this.exec(this.queries.account('id', id));
  }
  accountByOidcSubject(subject: string): Promise<AccountSecrets | undefined> {
    return this.exec(this.queries.account('oidc_subject', subject));
  }
  listAccounts(): Promise<Account[]> {
    return this.exec(this.queries.listAccounts());
  }
  setAccountDisabled(id: string, disabled: boolean): Promise<boolean> {
    return this.exec(this.queries.setAccountDisabled(id, disabled));
  }
  setAccountAdmin(id: string, admin: boolean): Promise<boolean> {
    return this.exec(this.queries.setAccountAdmin(id, admin));
  }
  linkOidcSubject(id: string, subject: string): Promise<void> {
    return this.exec(this.queries.linkOidcSubject(id, subject));
  }
  setPasswordHash(id: string, passwordHash: string): Promise<void> {
    return this.exec(this.queries.setPasswordHash(id, passwordHash));
  }
  recordSignInFailure(id: string, lockedUntil: string | null): Promise<number> {
    return this.exec(this.queries.recordSignInFailure(id, lockedUntil));
  }
  clearSignInFailures(id: string): Promise<void> {
    return this.exec(this.queries.clearSignInFailures(id));
  }
  operatorAccount(): Promise<Account> {
    return this.exec(this.queries.operatorAccount());
  }

  createSession(idHash: Buffer, session: Session): Promise<void> {
    return this.exec(this.queries.createSession(idHash, session));
  }
  sessionByHash(idHash: Buffer): Promise<Session | undefined> {
    return this.exec(this.queries.sessionByHash(idHash));
  }
  deleteSession(idHash: Buffer): Promise<void> {
    return this.exec(this.queries.deleteSession(idHash));
  }
  deleteSessionsOf(accountId: string): Promise<void> {
    return this.exec(this.queries.deleteSessionsOf(accountId));
  }
  purgeExpiredSessions(now: Date): Promise<void> {
    return this.exec(this.queries.purgeExpiredSessions(now));
  }

  createKey(input: NewApiKey): Promise<CreatedApiKey> {
    return this.exec(this.queries.createKey(input));
  }
  listKeys(ownerId?: string): Promise<ApiKeyRecord[]> {
    return this.exec(this.queries.listKeys(ownerId));
  }
  keyById(id: string): Promise<ApiKeyRecord | undefined> {
    return this.exec(this.queries.keyById(id));
  }
  revokeKey(id: string, ownerId?: string): Promise<boolean> {
    return this.exec(this.queries.revokeKey(id, ownerId));
  }
  keyByHash(hash: Buffer): Promise<KeyPrincipal | undefined> {
    return this.exec(this.queries.keyByHash(hash));
  }
  touchKey(id: string, at: Date): Promise<void> {
    return this.exec(this.queries.touchKey(id, at));
  }
  rotateKey(id: string, graceUntil: string | null): Promise<CreatedApiKey | undefined> {
    return this.exec(this.queries.rotateKey(id, graceUntil));
  }
  pruneKeys(now: Date): Promise<ApiKeyRecord[]> {
    return this.exec(this.queries.pruneKeys(now));
  }
  setKeyLimits(id: string, limits: KeyLimits): Promise<ApiKeyRecord | undefined> {
    return this.exec(this.queries.setKeyLimits(id, limits));
  }
  takeQuota(keyId: string, day: string, name: string, limit: number): Promise<QuotaTake> {
    return this.exec(this.queries.takeQuota(keyId, day, name, limit));
  }
  quotaUsage(keyId: string, day: string): Promise<Record<string, number>> {
    return this.exec(this.queries.quotaUsage(keyId, day));
  }
}
