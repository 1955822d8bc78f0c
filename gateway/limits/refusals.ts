/**
 * The answers a rate-limited request gets instead of running: 429 with the wait, and 503
 * when the shared store is away and RATE_LIMIT_ON_STORE_ERROR=deny. Built only on refusal,
 * so an admitted request pays for none of these strings.
 */
import { formatRate, type RatePolicy } from '../core/key-limits.ts';
import type { HttpResponse } from '../http/engine.ts';
import { JSON_RPC } from '../mcp/protocol.ts';
import { errorResponse } from '../mcp/wire/json-rpc.ts';

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

export function storeDownResponse(): HttpResponse {
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
