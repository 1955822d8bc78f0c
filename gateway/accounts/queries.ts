/**
 * Every accounts, sessions and keys query, written once for both engines (see sql.ts for
 * how a driver runs them). Timestamps are ISO strings in TEXT columns in both, so they
 * compare as times and read back unchanged.
 */
import { generateApiKey, generateApiKeyId, hashApiKey } from '../core/api-key.ts';
import type { KeyLimits, QuotaTake } from '../core/key-limits.ts';
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
} from './model.ts';
import {
  type AccountRow,
  accountFromRow,
  KEY_COLUMNS,
  type KeyRow,
  keyFromRow,
  newAccountId,
  PRINCIPAL_SQL,
  PRUNABLE_WHERE,
  type PrincipalRow,
  principalFromRow,
  publicAccount,
  TAKE_QUOTA_SQL,
} from './rows.ts';
import { type Dialect, type Op, row, rows, run, transaction } from './sql.ts';

type AccountColumn = 'id' | 'email' | 'oidc_subject';

interface SessionRow {
  account_id: string;
  csrf_token: string;
  created_at: string;
  expires_at: string;
}

export class AccountQueries {
  constructor(private readonly dialect: Dialect) {}

  *account(column: AccountColumn, value: string): Op<AccountSecrets | undefined> {
    const found = yield* row<AccountRow>(`SELECT * FROM accounts WHERE ${column} = $1`, [value]);
    return found ? accountFromRow(found) : undefined;
  }

  *accountByEmail(email: string): Op<AccountSecrets | undefined> {
    return yield* this.account('email', normalizeEmail(email));
  }

  *createAccount(input: NewAccount): Op<Account> {
    const created = yield* row<AccountRow>(
      `INSERT INTO accounts (id, email, password_hash, admin, created_at, oidc_subject)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
      [
        newAccountId(),
        normalizeEmail(input.email),
        input.passwordHash,
        this.dialect.boolean(input.admin),
        new Date().toISOString(),
        input.oidcSubject ?? null,
      ],
    );
    return publicAccount(accountFromRow(created as AccountRow));
  }

  *listAccounts(): Op<Account[]> {
    const found = yield* rows<AccountRow>('SELECT * FROM accounts ORDER BY created_at, id');
    return found.map((account) => publicAccount(accountFromRow(account)));
  }

  *setAccountDisabled(id: string, disabled: boolean): Op<boolean> {
    const at = disabled ? new Date().toISOString() : null;
    return (yield* run('UPDATE accounts SET disabled_at = $1 WHERE id = $2', [at, id])) > 0;
  }

  *setAccountAdmin(id: string, admin: boolean): Op<boolean> {
    const value = this.dialect.boolean(admin);
    return (yield* run('UPDATE accounts SET admin = $1 WHERE id = $2', [value, id])) > 0;
  }

  *linkOidcSubject(id: string, subject: string): Op<void> {
    yield* run('UPDATE accounts SET oidc_subject = $1 WHERE id = $2', [subject, id]);
  }

  *setPasswordHash(id: string, passwordHash: string): Op<void> {
    yield* run(
      'UPDATE accounts SET password_hash = $1, failed_sign_ins = 0, locked_until = NULL WHERE id = $2',
      [passwordHash, id],
    );
  }

  *recordSignInFailure(id: string, lockedUntil: string | null): Op<number> {
    const counted = yield* row<{ failed_sign_ins: number }>(
      `UPDATE accounts SET failed_sign_ins = failed_sign_ins + 1, locked_until = COALESCE($1, locked_until)
       WHERE id = $2 RETURNING failed_sign_ins`,
      [lockedUntil, id],
    );
    return counted ? Number(counted.failed_sign_ins) : 0;
  }

  *clearSignInFailures(id: string): Op<void> {
    yield* run('UPDATE accounts SET failed_sign_ins = 0, locked_until = NULL WHERE id = $1', [id]);
  }

  *operatorAccount(): Op<Account> {
    // Hosts starting together may both try: the unique email makes one insert win.
    yield* run(
      `INSERT INTO accounts (id, email, password_hash, admin, created_at) VALUES ($1, $2, NULL, $3, $4)
       ON CONFLICT (email) DO NOTHING`,
      [newAccountId(), OPERATOR_EMAIL, this.dialect.boolean(false), new Date().toISOString()],
    );
    return publicAccount((yield* this.account('email', OPERATOR_EMAIL)) as AccountSecrets);
  }

  *createSession(idHash: Buffer, session: Session): Op<void> {
    yield* run(
      'INSERT INTO sessions (id_hash, account_id, csrf_token, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
      [idHash, session.accountId, session.csrfToken, session.createdAt, session.expiresAt],
    );
  }

  *sessionByHash(idHash: Buffer): Op<Session | undefined> {
    const found = yield* row<SessionRow>(
      'SELECT account_id, csrf_token, created_at, expires_at FROM sessions WHERE id_hash = $1',
      [idHash],
    );
    if (!found) return undefined;
    return {
      accountId: found.account_id,
      csrfToken: found.csrf_token,
      createdAt: found.created_at,
      expiresAt: found.expires_at,
    };
  }

  *deleteSession(idHash: Buffer): Op<void> {
    yield* run('DELETE FROM sessions WHERE id_hash = $1', [idHash]);
  }

  *purgeExpiredSessions(now: Date): Op<void> {
    yield* run('DELETE FROM sessions WHERE expires_at <= $1', [now.toISOString()]);
  }

  *deleteSessionsOf(accountId: string): Op<void> {
    yield* run('DELETE FROM sessions WHERE account_id = $1', [accountId]);
  }

  *createKey(input: NewApiKey): Op<CreatedApiKey> {
    const key = generateApiKey();
    const id = generateApiKeyId();
    yield* run(
      `INSERT INTO api_keys (id, key_hash, label, account_id, scopes, limits, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        id,
        hashApiKey(key),
        input.label,
        input.ownerId,
        JSON.stringify(input.scopes),
        JSON.stringify(input.limits ?? {}),
        new Date().toISOString(),
        input.expiresAt,
      ],
    );
    return { ...((yield* this.keyById(id)) as ApiKeyRecord), key };
  }

  *listKeys(ownerId?: string): Op<ApiKeyRecord[]> {
    const found =
      ownerId === undefined
        ? yield* rows<KeyRow>(`SELECT ${KEY_COLUMNS} ORDER BY k.created_at, k.id`)
        : yield* rows<KeyRow>(`SELECT ${KEY_COLUMNS} WHERE k.account_id = $1 ORDER BY k.created_at, k.id`, [
            ownerId,
          ]);
    return found.map(keyFromRow);
  }

  *keyById(id: string): Op<ApiKeyRecord | undefined> {
    const found = yield* row<KeyRow>(`SELECT ${KEY_COLUMNS} WHERE k.id = $1`, [id]);
    return found ? keyFromRow(found) : undefined;
  }

  *revokeKey(id: string, ownerId?: string): Op<boolean> {
    const sql = 'UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2';
    const now = new Date().toISOString();
    const changed =
      ownerId === undefined
        ? yield* run(sql, [now, id])
        : yield* run(`${sql} AND account_id = $3`, [now, id, ownerId]);
    return changed > 0;
  }

  *keyByHash(hash: Buffer): Op<KeyPrincipal | undefined> {
    const found = yield* row<PrincipalRow>(PRINCIPAL_SQL, [hash]);
    return found ? principalFromRow(found) : undefined;
  }

  *touchKey(id: string, at: Date): Op<void> {
    yield* run('UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [at.toISOString(), id]);
  }

  *rotateKey(id: string, graceUntil: string | null): Op<CreatedApiKey | undefined> {
    const key = generateApiKey();
    const lock = this.dialect.lockRows('k');
    const rotated = yield* transaction(function* () {
      const current = yield* row<{ key_hash: Buffer }>(
        `SELECT k.key_hash FROM api_keys k WHERE k.id = $1 AND k.revoked_at IS NULL${lock}`,
        [id],
      );
      if (!current) return false;
      if (graceUntil !== null) {
        yield* run('INSERT INTO key_grace_secrets (key_hash, key_id, valid_until) VALUES ($1, $2, $3)', [
          current.key_hash,
          id,
          graceUntil,
        ]);
      }
      yield* run('UPDATE api_keys SET key_hash = $1 WHERE id = $2', [hashApiKey(key), id]);
      return true;
    });
    return rotated ? { ...((yield* this.keyById(id)) as ApiKeyRecord), key } : undefined;
  }

  *pruneKeys(now: Date): Op<ApiKeyRecord[]> {
    const at = now.toISOString();
    const lock = this.dialect.lockRows('k');
    return yield* transaction(function* () {
      const pruned = yield* rows<KeyRow>(
        `SELECT ${KEY_COLUMNS} WHERE ${PRUNABLE_WHERE} ORDER BY k.created_at, k.id${lock}`,
        [at],
      );
      // Pruning is rare and its keys few: one id at a time reads the same in both engines.
      for (const { id } of pruned) {
        yield* run('DELETE FROM key_usage WHERE key_id = $1', [id]);
        yield* run('DELETE FROM key_grace_secrets WHERE key_id = $1', [id]);
        yield* run('DELETE FROM api_keys WHERE id = $1', [id]);
      }
      yield* run('DELETE FROM key_grace_secrets WHERE valid_until <= $1', [at]);
      return pruned.map(keyFromRow);
    });
  }

  *setKeyLimits(id: string, limits: KeyLimits): Op<ApiKeyRecord | undefined> {
    const changed = yield* run('UPDATE api_keys SET limits = $1 WHERE id = $2', [JSON.stringify(limits), id]);
    return changed > 0 ? yield* this.keyById(id) : undefined;
  }

  *takeQuota(keyId: string, day: string, name: string, limit: number): Op<QuotaTake> {
    const taken = yield* row<{ used: number }>(TAKE_QUOTA_SQL, [keyId, day, name, limit]);
    if (taken) return { ok: true, used: Number(taken.used) };
    return { ok: false, used: (yield* this.quotaUsage(keyId, day))[name] ?? limit };
  }

  *quotaUsage(keyId: string, day: string): Op<Record<string, number>> {
    const found = yield* rows<{ name: string; used: number }>(
      'SELECT name, used FROM key_usage WHERE key_id = $1 AND day = $2',
      [keyId, day],
    );
    return Object.fromEntries(found.map((usage) => [usage.name, Number(usage.used)]));
  }
}
