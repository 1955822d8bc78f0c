import type { KeyPrincipal } from '../accounts/model.ts';
import { isStoreUnreachable, StateStoreUnavailableError } from '../accounts/model.ts';
import { hashApiKey, isWellFormedApiKey } from '../core/api-key.ts';
import type { KeyLimits } from '../core/key-limits.ts';
import type { KeyScopes } from '../core/scopes.ts';
import { BoundedTtlCache } from './bounded-cache.ts';

export interface KeyLookup {
  keyByHash(hash: Buffer): Promise<KeyPrincipal | undefined>;
  touchKey(id: string, at: Date): Promise<void>;
}

export type RefusalReason =
  | 'missing'
  | 'malformed'
  | 'unregistered'
  | 'revoked'
  | 'expired'
  | 'rotated'
  | 'owner_disabled';

export type AuthOutcome =
  | { ok: true; apiKeyId: string; ownerId: string; scopes: KeyScopes; limits: KeyLimits }
  | { ok: false; reason: RefusalReason };

export interface AuthenticatorOptions {
  /** Upper bound on how long a revoked key keeps working. */
  positiveTtlMs: number;
  negativeMaxEntries: number;
  /** Short, so a key used moments before it was created starts working quickly. */
  negativeTtlMs?: number;
  /** last_used_at is a hint for operators; writing it on every request would make the store the bottleneck. */
  touchIntervalMs?: number;
  /**
   * API_KEY_STALE_ON_STORE_ERROR_MS: how long after its verdict expired an admitted key is
   * still admitted when the store cannot be reached to ask again. 0 (the default) admits
   * nothing the store has not confirmed within positiveTtlMs.
   */
  staleOnStoreErrorMs?: number;
  /** Named in the 503 a lookup gets when the store does not answer. */
  storeName?: 'postgres' | 'sqlite';
}

const MAX_POSITIVE_ENTRIES = 100_000;

interface Admitted {
  id: string;
  ownerId: string;
  scopes: KeyScopes;
  /** Cached with the key, so a changed limit takes effect within positiveTtlMs, like a revocation. */
  limits: KeyLimits;
  expiresAtMs: number;
  /** A rotated-out secret's end: like expiry, known exactly, so checked on every request. */
  graceEndsAtMs: number;
}

export class ApiKeyAuthenticator {
  /** Keyed by the presented key string (see authenticate); refusals by the key's hash. */
  private readonly admitted: BoundedTtlCache<Admitted>;
  private readonly refused: BoundedTtlCache<Exclude<RefusalReason, 'missing' | 'malformed'>>;
  private readonly lastTouched = new Map<string, number>();
  private readonly touchIntervalMs: number;
  private readonly positiveTtlMs: number;
  /**
   * The verdicts of admitted keys, kept positiveTtlMs + staleOnStoreErrorMs: read only when
   * the store cannot be reached, and dropped when the store refuses the key. Absent when off.
   */
  private readonly stale: BoundedTtlCache<Admitted> | undefined;
  private readonly storeName: 'postgres' | 'sqlite';
  /** Set while admitted entries wait to expire: their key strings are dropped on time, not on the next lookup. */
  private purge: NodeJS.Timeout | undefined;

  constructor(
    private readonly keys: KeyLookup,
    options: AuthenticatorOptions,
  ) {
    this.admitted = new BoundedTtlCache(MAX_POSITIVE_ENTRIES, options.positiveTtlMs);
    this.refused = new BoundedTtlCache(options.negativeMaxEntries, options.negativeTtlMs ?? 2_000);
    this.touchIntervalMs = options.touchIntervalMs ?? 60_000;
    this.positiveTtlMs = options.positiveTtlMs;
    const staleMs = options.staleOnStoreErrorMs ?? 0;
    this.stale =
      staleMs > 0 ? new BoundedTtlCache(MAX_POSITIVE_ENTRIES, options.positiveTtlMs + staleMs) : undefined;
    this.storeName = options.storeName ?? 'sqlite';
  }

  /** Synchronous for a key already admitted (the common case): no promise made per request. */
  authenticate(headerValue: string | undefined): AuthOutcome | Promise<AuthOutcome> {
    if (headerValue === undefined || headerValue.trim() === '') return { ok: false, reason: 'missing' };
    // An admitted key is found by the string presented, so a cached request hashes nothing
    // (SHA-256 was 7-10% of a tools/list). The string stays only as long as its verdict
    // (positiveTtlMs, the revocation bound), is never logged, and refused strings are kept
    // by hash only. A malformed string never matches: only well-formed keys are admitted.
    const cached = this.admitted.get(headerValue);
    if (cached !== undefined) return this.admit(cached);
    if (!isWellFormedApiKey(headerValue)) return { ok: false, reason: 'malformed' };
    const hash = hashApiKey(headerValue);
    const cacheKey = hash.toString('base64');
    const cachedRefusal = this.refused.get(cacheKey);
    if (cachedRefusal) return { ok: false, reason: cachedRefusal };
    return this.lookUp(headerValue, hash, cacheKey);
  }

  /**
   * A key not cached either way: asked of the store, and the verdict cached. A store that
   * cannot be reached throws StateStoreUnavailableError (a 503 naming it), unless the key was
   * admitted within the stale window; any other store failure is thrown as it came.
   */
  private async lookUp(headerValue: string, hash: Buffer, cacheKey: string): Promise<AuthOutcome> {
    let found: KeyPrincipal | undefined;
    try {
      found = await this.keys.keyByHash(hash);
    } catch (error) {
      if (!isStoreUnreachable(error)) throw error;
      const before = this.stale?.get(headerValue);
      if (before) return this.admit(before);
      throw new StateStoreUnavailableError(this.storeName, { cause: error });
    }
    const reason = !found
      ? 'unregistered'
      : found.revoked
        ? 'revoked'
        : found.ownerDisabled
          ? 'owner_disabled'
          : undefined;
    if (reason || !found) {
      // A key the store now refuses never rides out a later outage on its old verdict.
      this.stale?.delete(headerValue);
      this.refused.set(cacheKey, reason ?? 'unregistered');
      return { ok: false, reason: reason ?? 'unregistered' };
    }
    const admitted: Admitted = {
      id: found.id,
      ownerId: found.ownerId,
      scopes: found.scopes,
      limits: found.limits,
      expiresAtMs: found.expiresAt === null ? Number.POSITIVE_INFINITY : Date.parse(found.expiresAt),
      graceEndsAtMs: found.graceUntil === undefined ? Number.POSITIVE_INFINITY : Date.parse(found.graceUntil),
    };
    this.admitted.set(headerValue, admitted);
    this.stale?.set(headerValue, admitted);
    this.schedulePurge();
    return this.admit(admitted);
  }

  /**
   * An admitted key's string leaves memory at most one TTL after its verdict expires, even
   * when it is never presented again (an expired entry is otherwise dropped only when looked up).
   */
  private schedulePurge(): void {
    if (this.purge || this.admitted.size + (this.stale?.size ?? 0) === 0) return;
    this.purge = setTimeout(() => {
      this.purge = undefined;
      this.admitted.dropExpired();
      this.stale?.dropExpired();
      this.schedulePurge();
    }, this.positiveTtlMs);
    this.purge.unref();
  }

  /** Expiry is checked on every request, cached or not: it is known exactly, unlike revocation. */
  private admit(admitted: Admitted): AuthOutcome {
    const now = Date.now();
    if (now >= admitted.expiresAtMs) return { ok: false, reason: 'expired' };
    if (now >= admitted.graceEndsAtMs) return { ok: false, reason: 'rotated' };
    this.noteUse(admitted.id);
    return {
      ok: true,
      apiKeyId: admitted.id,
      ownerId: admitted.ownerId,
      scopes: admitted.scopes,
      limits: admitted.limits,
    };
  }

  private noteUse(id: string): void {
    const now = Date.now();
    const last = this.lastTouched.get(id);
    if (last !== undefined && now - last < this.touchIntervalMs) return;
    this.lastTouched.set(id, now);
    // A busy or read-only store must not turn an admitted request away.
    this.keys.touchKey(id, new Date(now)).catch(() => {});
  }
}
