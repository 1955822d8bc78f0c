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
        ? this.operatorAccountSync()
        : (this.accountIdByEmail(owner) ??
          this.createAccountSync({ email: owner, passwordHash: null, admin: false }));
    return this.createKeySync({
      label,
      ownerId: account.id,
      scopes: options.scopes ?? { ...FULL_SCOPES },
      expiresAt: options.expiresAt ?? null,
      limits: options.limits ?? {},
    });
  }

  private accountIdByEmail(email: string): { id: string } | undefined {
    return this.db.prepare('SELECT id FROM accounts WHERE email = ?').get(email.trim().toLowerCase()) as
      | { id: string }
      | undefined;
  }

  list(): ApiKeyRecord[] {
    return this.listKeysSync();
  }

  revoke(id: string): boolean {
    return this.revokeKeySync(id);
  }

  findByHash(hash: Buffer): { id: string; revoked: boolean } | undefined {
    const found = this.keyByHashSync(hash);
    return found ? { id: found.id, revoked: found.revoked } : undefined;
  }

  setLimits(id: string, limits: KeyLimits): ApiKeyRecord | undefined {
    return this.setKeyLimitsSync(id, limits);
  }

  touch(id: string, at: Date): void {
    this.touchKeySync(id, at);
  }
}
