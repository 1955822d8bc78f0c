/**
 * The per-key rate limit every authenticated MCP request meets before its body is read, so
 * a refused request does nothing: no publish, no memory write, no upstream call. Counted in
 * the process's shared table, or in Redis when RATE_LIMIT_REDIS_URL is set; a Redis outage
 * falls back to the shared table (allow) or refuses with 503 (deny).
 */
import type { Logger } from 'pino';
import { effectivePolicy, formatRate, type KeyLimits, type RatePolicy } from '../core/key-limits.ts';
import type { HttpResponse } from '../http/engine.ts';
import { JSON_RPC } from '../mcp/protocol.ts';
import { errorResponse } from '../mcp/wire/json-rpc.ts';
import type { RemoteRateStore } from './redis-store.ts';
import type { SharedLimitTable, Verdict } from './shared-table.ts';

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
}

/** The draft's policy name; no partition key is sent, so nothing about the key leaks. */
const POLICY_NAME = '"per-key"';

/** The window of the draft's RateLimit-Policy: how long a full burst takes to refill. */
function policyHeader(policy: RatePolicy): string {
  const windowSeconds = Math.max(1, Math.ceil((policy.burst * policy.intervalMicros) / 1_000_000));
  return `${POLICY_NAME};q=${policy.burst};w=${windowSeconds}`;
}

export function rateLimitedResponse(keyId: string, policy: RatePolicy, waitMicros: number): HttpResponse {
  // Retry-After is whole seconds and never 0: a client that retries at once only burns its budget.
  const retryAfter = Math.max(1, Math.ceil(waitMicros / 1_000_000));
  const waitMs = Math.ceil(waitMicros / 1000);
  const rate = formatRate(policy.spec);
  const response = errorResponse(
    429,
    null,
    JSON_RPC.RATE_LIMITED,
    `Rate limit reached for key ${keyId} (${rate}, burst ${policy.burst}): nothing of this request ran. ` +
      `Wait ${retryAfter} s (Retry-After) before sending more; a key with a higher limit can be set with npm run keys -- update.`,
    { code: 'rate_limited', keyId, rate, burst: policy.burst, waitMs, retryAfterSeconds: retryAfter },
  );
  response.headers = {
    ...response.headers,
    'retry-after': String(retryAfter),
    'ratelimit-policy': policyHeader(policy),
    ratelimit: `${POLICY_NAME};r=0;t=${retryAfter}`,
  };
  return response;
}

function storeDownResponse(): HttpResponse {
  const response = errorResponse(
    503,
    null,
    JSON_RPC.RATE_LIMIT_STORE_UNAVAILABLE,
    'The shared rate-limit store (RATE_LIMIT_REDIS_URL) is unreachable and RATE_LIMIT_ON_STORE_ERROR=deny refuses requests until it returns. Retry shortly.',
    { code: 'rate_limit_store_unavailable' },
  );
  response.headers = { ...response.headers, 'retry-after': '1' };
  return response;
}

export class RateGate {
  /** Limits objects live in the key cache, so a policy is worked out once per key and cache turn. */
  private readonly policies = new WeakMap<KeyLimits, RatePolicy | null>();
  private storeDown = false;

  constructor(private readonly options: RateGateOptions) {}

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
    if (!policy) return null;
    if (this.options.remote) return this.checkRemote(keyId, policy, namespace);
    return this.answer(keyId, policy, namespace, this.takeLocal(keyId, policy));
  }

  private takeLocal(keyId: string, policy: RatePolicy): Verdict {
    const slot = this.options.table.slot(keyId);
    // A full table (65,536 keys in one process) cannot count this key: let it through rather than refuse a paying caller.
    return slot < 0 ? { ok: true, remaining: policy.burst } : this.options.table.take(slot, policy);
  }

  private answer(
    keyId: string,
    policy: RatePolicy,
    namespace: string,
    verdict: Verdict,
  ): HttpResponse | null {
    if (verdict.ok) return null;
    this.options.observe?.({ kind: 'rate_limited', namespace });
    return rateLimitedResponse(keyId, policy, verdict.waitMicros);
  }

  private async checkRemote(
    keyId: string,
    policy: RatePolicy,
    namespace: string,
  ): Promise<HttpResponse | null> {
    const remote = this.options.remote as RemoteRateStore;
    let verdict: Verdict;
    try {
      verdict = await remote.take(keyId, policy);
    } catch (error) {
      const deny = this.options.onStoreError === 'deny';
      this.options.observe?.({ kind: 'rate_store_unavailable', namespace, refused: deny });
      if (!this.storeDown) {
        this.storeDown = true;
        this.options.log.warn(
          { err: (error as Error).message, onStoreError: this.options.onStoreError },
          deny
            ? 'rate-limit store unreachable: refusing rate-limited requests with 503 until it returns (RATE_LIMIT_ON_STORE_ERROR=deny)'
            : 'rate-limit store unreachable: holding keys to this process’s own limit until it returns (RATE_LIMIT_ON_STORE_ERROR=allow)',
        );
      }
      if (deny) return storeDownResponse();
      return this.answer(keyId, policy, namespace, this.takeLocal(keyId, policy));
    }
    if (this.storeDown) {
      this.storeDown = false;
      this.options.log.info('rate-limit store reachable again: limits are shared again');
    }
    return this.answer(keyId, policy, namespace, verdict);
  }

  /** The shared store's readiness check, or null when limits are counted in this process only. */
  storeCheck(): (() => Promise<void>) | null {
    const remote = this.options.remote;
    return remote ? () => remote.ping() : null;
  }

  close(): Promise<void> {
    return this.options.remote?.close() ?? Promise.resolve();
  }
}
