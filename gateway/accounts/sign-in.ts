/**
 * Brute force is slowed twice: per client address (a sliding window of attempts) and per
 * account (a lockout after consecutive failures, kept in the store so every gateway host
 * sees it). Both answer before the password is checked, so a locked account costs no hashing.
 */
import type { AccountSecrets, StateStore } from './model.ts';
import { verifyPassword } from './passwords.ts';

export interface SignInPolicy {
  maxFailures: number;
  lockoutMs: number;
  attemptsPerWindow: number;
  windowMs: number;
}

export type SignInResult =
  | { ok: true; account: AccountSecrets }
  | { ok: false; reason: 'invalid' | 'locked' | 'disabled' | 'rate_limited'; retryAfterSeconds?: number };

const MAX_TRACKED_ADDRESSES = 10_000;

/** Attempts per address in the current window; oldest addresses are forgotten first when full. */
export class AttemptLimiter {
  private readonly windows = new Map<string, { startedAt: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Counts an attempt; returns seconds to wait when over the limit, else 0. */
  take(address: string, now = Date.now()): number {
    let window = this.windows.get(address);
    if (!window || now - window.startedAt >= this.windowMs) {
      this.windows.delete(address);
      if (this.windows.size >= MAX_TRACKED_ADDRESSES) {
        const oldest = this.windows.keys().next().value;
        if (oldest !== undefined) this.windows.delete(oldest);
      }
      window = { startedAt: now, count: 0 };
      this.windows.set(address, window);
    }
    window.count += 1;
    if (window.count <= this.limit) return 0;
    return Math.max(1, Math.ceil((window.startedAt + this.windowMs - now) / 1000));
  }
}

export class SignInService {
  private readonly limiter: AttemptLimiter;

  constructor(
    private readonly store: StateStore,
    private readonly policy: SignInPolicy,
  ) {
    this.limiter = new AttemptLimiter(policy.attemptsPerWindow, policy.windowMs);
  }

  async signIn(email: string, password: string, address: string): Promise<SignInResult> {
    const wait = this.limiter.take(address);
    if (wait > 0) return { ok: false, reason: 'rate_limited', retryAfterSeconds: wait };
    const account = await this.store.accountByEmail(email);
    const now = Date.now();
    if (account?.lockedUntil && Date.parse(account.lockedUntil) > now) {
      return {
        ok: false,
        reason: 'locked',
        retryAfterSeconds: Math.ceil((Date.parse(account.lockedUntil) - now) / 1000),
      };
    }
    const matches = await verifyPassword(account?.passwordHash ?? null, password);
    if (!account) return { ok: false, reason: 'invalid' };
    if (!matches) {
      const lockAt = account.failedSignIns + 1 >= this.policy.maxFailures;
      await this.store.recordSignInFailure(
        account.id,
        lockAt ? new Date(now + this.policy.lockoutMs).toISOString() : null,
      );
      return { ok: false, reason: 'invalid' };
    }
    if (account.disabledAt) return { ok: false, reason: 'disabled' };
    if (account.failedSignIns > 0) await this.store.clearSignInFailures(account.id);
    return { ok: true, account };
  }
}
