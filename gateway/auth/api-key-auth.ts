import { hashApiKey, isWellFormedApiKey } from '../keys/api-key.ts';
import { BoundedTtlCache } from './bounded-cache.ts';

export interface KeyLookup {
  findByHash(hash: Buffer): { id: string; revoked: boolean } | undefined;
  touch(id: string, at: Date): void;
}

export type AuthOutcome =
  | { ok: true; apiKeyId: string }
  | { ok: false; reason: 'missing' | 'malformed' | 'unregistered' | 'revoked' };

export interface AuthenticatorOptions {
  /** Upper bound on how long a revoked key keeps working. */
  positiveTtlMs: number;
  negativeMaxEntries: number;
  /** Short, so a key used moments before it was created starts working quickly. */
  negativeTtlMs?: number;
  /** last_used_at is a hint for operators; writing it on every request would make SQLite the bottleneck. */
  touchIntervalMs?: number;
}

const MAX_POSITIVE_ENTRIES = 100_000;

export class ApiKeyAuthenticator {
  private readonly admitted: BoundedTtlCache<string>;
  private readonly refused: BoundedTtlCache<'unregistered' | 'revoked'>;
  private readonly lastTouched = new Map<string, number>();
  private readonly touchIntervalMs: number;

  constructor(
    private readonly keys: KeyLookup,
    options: AuthenticatorOptions,
  ) {
    this.admitted = new BoundedTtlCache(MAX_POSITIVE_ENTRIES, options.positiveTtlMs);
    this.refused = new BoundedTtlCache(options.negativeMaxEntries, options.negativeTtlMs ?? 2_000);
    this.touchIntervalMs = options.touchIntervalMs ?? 60_000;
  }

  authenticate(headerValue: string | undefined): AuthOutcome {
    if (headerValue === undefined || headerValue.trim() === '') return { ok: false, reason: 'missing' };
    if (!isWellFormedApiKey(headerValue)) return { ok: false, reason: 'malformed' };
    const cacheKey = hashApiKey(headerValue).toString('base64');
    const cachedId = this.admitted.get(cacheKey);
    if (cachedId !== undefined) {
      this.noteUse(cachedId);
      return { ok: true, apiKeyId: cachedId };
    }
    const cachedRefusal = this.refused.get(cacheKey);
    if (cachedRefusal) return { ok: false, reason: cachedRefusal };

    const found = this.keys.findByHash(Buffer.from(cacheKey, 'base64'));
    if (!found || found.revoked) {
      const reason = found ? 'revoked' : 'unregistered';
      this.refused.set(cacheKey, reason);
      return { ok: false, reason };
    }
    this.admitted.set(cacheKey, found.id);
    this.noteUse(found.id);
    return { ok: true, apiKeyId: found.id };
  }

  private noteUse(id: string): void {
    const now = Date.now();
    const last = this.lastTouched.get(id);
    if (last !== undefined && now - last < this.touchIntervalMs) return;
    this.lastTouched.set(id, now);
    try {
      this.keys.touch(id, new Date(now));
    } catch {
      // A busy or read-only store must not turn an admitted request away.
    }
  }
}
