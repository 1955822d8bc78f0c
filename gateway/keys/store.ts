/**
 * The SQLite state store with the synchronous key calls the CLI, `npm run dev`, benches and
 * tests have always used. The gateway itself talks to the async StateStore interface.
 */
import type { ApiKeyRecord, CreatedApiKey } from '../accounts/model.ts';
import { SqliteStateStore } from '../accounts/sqlite-store.ts';
import type { KeyLimits } from '../core/key-limits.ts';
import { FULL_SCOPES, type KeyScopes } from '../core/scopes.ts';

export type { ApiKeyRecord, CreatedApiKey } from '../accounts/model.ts';

export interface CreateKeyOptions {
  scopes?: KeyScopes;
  expiresAt?: string | null;
  limits?: KeyLimits;
}

export class ApiKeyStore extends SqliteStateStore {
  /**
   * owner names the owning account by email; an unknown name gets an account that owns keys
   * but cannot sign in (no password). Without owner the key belongs to the operator account.
   */
  create(label: string, owner: string | null = null, options: CreateKeyOptions = {}): CreatedApiKey {
    const account =
      owner === null
        ? this.runSync(this.queries.operatorAccount())
        : (this.runSync(this.queries.accountByEmail(owner)) ??
          this.runSync(this.queries.createAccount({ email: owner, passwordHash: null, admin: false })));
    return this.runSync(
      this.queries.createKey({
        label,
        ownerId: account.id,
        scopes: options.scopes ?? { ...FULL_SCOPES },
        expiresAt: options.expiresAt ?? null,
        limits: options.limits ?? {},
      }),
    );
  }

  list(): ApiKeyRecord[] {
    return this.runSync(this.queries.listKeys());
  }

  revoke(id: string): boolean {
    return this.runSync(this.queries.revokeKey(id));
  }

  findByHash(hash: Buffer): { id: string; revoked: boolean } | undefined {
    const found = this.runSync(this.queries.keyByHash(hash));
    return found ? { id: found.id, revoked: found.revoked } : undefined;
  }

  setLimits(id: string, limits: KeyLimits): ApiKeyRecord | undefined {
    return this.runSync(this.queries.setKeyLimits(id, limits));
  }

  touch(id: string, at: Date): void {
    this.runSync(this.queries.touchKey(id, at));
  }
}
