/**
 * The per-key rate limit every authenticated MCP request meets before its body is read, so
 * a refused request does nothing: no publish, no memory write, no upstream call. Counted in
 * the process's shared table, or in Redis when RATE_LIMIT_REDIS_URL is set; a Redis outage
 * falls back to the shared table (allow) or refuses with 503 (deny).
 *
 * Each listener thread leases a few requests of a key's budget at a time (a small share of
 * its burst) and spends them without touching the bucket: no clock read, no atomics, no
 * Redis round trip per request. With Redis, the next lease is fetched while the current one
 * still has a reserve, so the request path normally never waits on Redis. Leases left
 * unused for a sweep period go back to the bucket. The bound this puts on accuracy is in
 * docs/decisions/0151-rate-limit-leases.md.
 */
import type { Logger } from 'pino';
import { effectivePolicy, type KeyLimits, type RatePolicy } from '../core/key-limits.ts';
import type { HttpResponse } from '../http/engine.ts';
import type { RemoteRateStore } from './redis-store.ts';
import { rateLimitedResponse, storeDownResponse } from './refusals.ts';
import type { Grant, SharedLimitTable, Verdict } from './shared-table.ts';

/**
 * What a metrics layer would count. Called once per refused (or store-degraded) request,
 * with bounded labels only: never a key id.
 */
export type LimitEvent =
  | { kind: 'rate_limited'; namespace: string }
  | { kind: 'quota_exceeded'; namespace: string; quota: string }
  | { kind: 'too_many_polls'; namespace: string }
  | { kind: 'rate_store_unavailable'; namespace: string; refused: boolean };

export type LimitObserver = (event: LimitEvent) => void;

export interface RateGateOptions {
  table: SharedLimitTable;
  /** RATE_LIMIT_DEFAULT with its burst, for keys without a limit of their own. */
  defaultPolicy: RatePolicy | null;
  remote?: RemoteRateStore;
  onStoreError: 'allow' | 'deny';
  log: Logger;
  observe?: LimitObserver;
  /** Listener threads of this process (GATEWAY_THREADS): together they lease one thread's share. */
  threads?: number;
}

/** A lease is at most 1/LEASE_DIVISOR of the key's burst (per process, split over its threads). */
export const LEASE_DIVISOR = 128;
/** Past this, a bigger lease saves nothing measurable: one bucket call per 1,000 requests. */
export const LEASE_MAX = 1000;
/** A key's lease that no request touched for a whole period goes back to the bucket. */
export const LEASE_IDLE_MS = 1000;

/** Requests one listener thread takes from a key's bucket at once; 1 means no lease (exact). */
export function leaseSize(policy: RatePolicy, threads = 1): number {
  const share = Math.floor(policy.burst / (LEASE_DIVISOR * Math.max(1, threads)));
  return share < 1 ? 1 : share > LEASE_MAX ? LEASE_MAX : share;
}

/** One key's leased requests in this thread. */
interface Lease {
  keyId: string;
  policy: RatePolicy;
  /** Requests taken from the bucket and not yet spent. */
  tokens: number;
  /** Requests asked for per lease. */
  size: number;
  /** With Redis, the next lease is fetched when this few are left (-1: never ahead of need). */
  lowWater: number;
  /** The key's slot in the shared table (in-memory limits only). */
  slot: number;
  /** A lease call under way; requests that find no tokens share it instead of asking again. */
  refilling: Promise<Grant> | null;
  /** Set by each request, cleared by the sweep: a lease found unused gives its tokens back. */
  used: boolean;
  /** Date.now() until which the bucket said it holds nothing (Redis): refused without asking. */
  emptyUntil: number;
}

export class RateGate {
  /** Limits objects live in the key cache, so a policy is worked out once per key and cache turn. */
  private readonly policies = new WeakMap<KeyLimits, RatePolicy | null>();
  private readonly leases = new Map<string, Lease>();
  private readonly remote: RemoteRateStore | undefined;
  private readonly threads: number;
  private sweeper: NodeJS.Timeout | undefined;
  private storeDown = false;

  constructor(private readonly options: RateGateOptions) {
    this.remote = options.remote;
    this.threads = options.threads ?? 1;
  }

  private policyFor(limits: KeyLimits): RatePolicy | null {
    let policy = this.policies.get(limits);
    if (policy === undefined) {
      policy = effectivePolicy(limits, this.options.defaultPolicy);
      this.policies.set(limits, policy);
    }
    return policy;
  }

  /** null admits the request; otherwise the answer to send instead of running it. */
  check(
    keyId: string,
    limits: KeyLimits,
    namespace: string,
  ): HttpResponse | null | Promise<HttpResponse | null> {
    const policy = this.policyFor(limits);
    if (policy === null) return null;
    let lease = this.leases.get(keyId);
    if (lease === undefined || lease.policy !== policy) lease = this.leaseFor(keyId, policy, lease);
    lease.used = true;
    if (lease.tokens > 0) {
      lease.tokens -= 1;
      if (lease.tokens <= lease.lowWater && lease.refilling === null) this.prefetch(lease);
      return null;
    }
    if (this.remote === undefined) return this.checkLocal(lease, namespace);
    // A flood past the budget is refused here, without a promise or a Redis call each.
    if (lease.emptyUntil !== 0) {
      const left = lease.emptyUntil - Date.now();
      if (left > 0) return this.refuse(lease, namespace, left * 1000);
      lease.emptyUntil = 0;
    }
    return this.checkRemote(lease, namespace);
  }

  private leaseFor(keyId: string, policy: RatePolicy, old: Lease | undefined): Lease {
    // A new limits object with the same rate (the key cache turned over) keeps its lease.
    if (old && old.policy.burst === policy.burst && old.policy.intervalMicros === policy.intervalMicros) {
      old.policy = policy;
      return old;
    }
    if (old) this.release(old);
    const size = leaseSize(policy, this.threads);
    const lease: Lease = {
      keyId,
      policy,
      tokens: 0,
      size,
      lowWater: this.remote !== undefined && size > 1 ? size >> 1 : -1,
      slot: this.remote === undefined ? this.options.table.slot(keyId) : -1,
      refilling: null,
      used: true,
      emptyUntil: 0,
    };
    this.leases.set(keyId, lease);
    if (this.sweeper === undefined) {
      this.sweeper = setInterval(() => this.sweep(), LEASE_IDLE_MS);
      this.sweeper.unref();
    }
    return lease;
  }

  private checkLocal(lease: Lease, namespace: string): HttpResponse | null {
    // A full table (65,536 keys in one process) cannot count this key: let it through rather than refuse a paying caller.
    if (lease.slot < 0) return null;
    const grant = this.options.table.lease(lease.slot, lease.policy, lease.size);
    if (grant.granted === 0) return this.refuse(lease, namespace, grant.waitMicros);
    lease.tokens = grant.granted - 1;
    return null;
  }

  private async checkRemote(lease: Lease, namespace: string): Promise<HttpResponse | null> {
    const remote = this.remote as RemoteRateStore;
    let grant: Grant;
    try {
      if (lease.refilling !== null) {
        // A lease is on its way: share it; ask for one request alone only if it ran dry.
        const shared = await lease.refilling;
        if (lease.tokens > 0) {
          lease.tokens -= 1;
          return null;
        }
        grant = shared.granted === 0 ? shared : await remote.lease(lease.keyId, lease.policy, 1);
      } else {
        grant = await this.refill(lease, true);
      }
    } catch (error) {
      return this.storeError(error as Error, lease, namespace);
    }
    this.storeUp();
    if (grant.granted > 0) return null;
    lease.emptyUntil = Date.now() + grant.waitMicros / 1000;
    return this.refuse(lease, namespace, grant.waitMicros);
  }

  /** Asks Redis for a lease; with `forCaller` the first request of it is the caller's. */
  private refill(lease: Lease, forCaller: boolean): Promise<Grant> {
    const remote = this.remote as RemoteRateStore;
    const pending = remote.lease(lease.keyId, lease.policy, lease.size).then((grant) => {
      if (grant.granted > 0) lease.tokens += forCaller ? grant.granted - 1 : grant.granted;
      return grant;
    });
    lease.refilling = pending;
    const done = () => {
      if (lease.refilling === pending) lease.refilling = null;
    };
    pending.then(done, done);
    return pending;
  }

  /** The next lease, fetched while the current one still has a reserve. */
  private prefetch(lease: Lease): void {
    if (lease.emptyUntil !== 0 && Date.now() < lease.emptyUntil) return;
    this.refill(lease, false).then(
      (grant) => {
        this.storeUp();
        if (grant.granted === 0) lease.emptyUntil = Date.now() + grant.waitMicros / 1000;
      },
      // Not a request's failure: the request that finds the lease spent meets the outage.
      () => {},
    );
  }

  private refuse(lease: Lease, namespace: string, waitMicros: number): HttpResponse {
    this.options.observe?.({ kind: 'rate_limited', namespace });
    return rateLimitedResponse(lease.keyId, lease.policy, waitMicros);
  }

  private storeError(error: Error, lease: Lease, namespace: string): HttpResponse | null {
    const deny = this.options.onStoreError === 'deny';
    this.options.observe?.({ kind: 'rate_store_unavailable', namespace, refused: deny });
    if (!this.storeDown) {
      this.storeDown = true;
      this.options.log.warn(
        { err: error.message, onStoreError: this.options.onStoreError },
        deny
          ? 'rate-limit store unreachable: refusing rate-limited requests with 503 until it returns (RATE_LIMIT_ON_STORE_ERROR=deny)'
          : 'rate-limit store unreachable: holding keys to this process’s own limit until it returns (RATE_LIMIT_ON_STORE_ERROR=allow)',
      );
    }
    if (deny) return storeDownResponse();
    const verdict = this.takeLocal(lease.keyId, lease.policy);
    return verdict.ok ? null : this.refuse(lease, namespace, verdict.waitMicros);
  }

  private storeUp(): void {
    if (!this.storeDown) return;
    this.storeDown = false;
    this.options.log.info('rate-limit store reachable again: limits are shared again');
  }

  /** The process's own limit, one request at a time: the fallback while Redis is away. */
  private takeLocal(keyId: string, policy: RatePolicy): Verdict {
    const slot = this.options.table.slot(keyId);
    return slot < 0 ? { ok: true } : this.options.table.take(slot, policy);
  }

  /** Leases no request touched since the last sweep go back to the bucket. */
  private sweep(): void {
    for (const lease of this.leases.values()) {
      if (lease.used) {
        lease.used = false;
        continue;
      }
      if (lease.refilling !== null) continue;
      this.leases.delete(lease.keyId);
      this.release(lease);
    }
    if (this.leases.size === 0) this.stopSweeping();
  }

  private stopSweeping(): void {
    if (this.sweeper !== undefined) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** Gives a lease's unspent requests back; if Redis cannot take them now, its refill restores them in time. */
  private release(lease: Lease): Promise<void> {
    const count = lease.tokens;
    lease.tokens = 0;
    if (count <= 0) return Promise.resolve();
    if (this.remote !== undefined) {
      return this.remote.giveBack(lease.keyId, lease.policy, count).catch(() => {});
    }
    if (lease.slot >= 0) this.options.table.giveBack(lease.slot, lease.policy, count);
    return Promise.resolve();
  }

  /** Requests this thread holds leased for a key (what the sweep would give back). */
  leasedFor(keyId: string): number {
    return this.leases.get(keyId)?.tokens ?? 0;
  }

  /** The shared store's readiness check, or null when limits are counted in this process only. */
  storeCheck(): (() => Promise<void>) | null {
    const remote = this.remote;
    return remote ? () => remote.ping() : null;
  }

  async close(): Promise<void> {
    this.stopSweeping();
    const leases = [...this.leases.values()];
    this.leases.clear();
    await Promise.all(leases.map((lease) => this.release(lease)));
    await this.remote?.close();
  }
}
