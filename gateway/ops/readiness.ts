/**
 * GET /readyz: whether this gateway should get traffic now. Each check is a real round trip
 * (a state-store query, a broker-worker status call, a Redis PING) with its own deadline,
 * run side by side so one hung dependency costs one deadline, not the sum.
 * An advisory check is run and reported (and scraped) like the others but does not make the
 * gateway unready: a dependency the gateway serves well without (Redis under
 * RATE_LIMIT_ON_STORE_ERROR=allow) must not take every gateway of a fleet out of its load
 * balancer at once when it goes away.
 */

export type ReadinessCheck = () => Promise<unknown>;

export interface CheckResult {
  ok: boolean;
  /** Why it failed, for the operator reading the JSON; never holds a secret (URLs are not echoed). */
  error?: string;
  /** Present (true) when this check's failure does not make the gateway unready. */
  advisory?: true;
}

export interface ReadinessReport {
  ready: boolean;
  draining: boolean;
  checks: Record<string, CheckResult>;
}

export const CHECK_TIMEOUT_MS = 1500;

function withDeadline(check: ReadinessCheck, timeoutMs: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([check(), deadline]).finally(() => clearTimeout(timer));
}

export async function runReadiness(
  checks: Record<string, ReadinessCheck>,
  draining: boolean,
  {
    timeoutMs = CHECK_TIMEOUT_MS,
    advisory = new Set<string>(),
  }: { timeoutMs?: number; advisory?: ReadonlySet<string> } = {},
): Promise<ReadinessReport> {
  const names = Object.keys(checks);
  const settled = await Promise.allSettled(names.map((name) => withDeadline(checks[name]!, timeoutMs)));
  const results: Record<string, CheckResult> = {};
  names.forEach((name, index) => {
    const outcome = settled[index]!;
    const result: CheckResult =
      outcome.status === 'fulfilled'
        ? { ok: true }
        : { ok: false, error: String((outcome.reason as Error)?.message ?? outcome.reason).slice(0, 300) };
    if (advisory.has(name)) result.advisory = true;
    results[name] = result;
  });
  const allOk = Object.entries(results).every(([name, result]) => result.ok || advisory.has(name));
  return { ready: allOk && !draining, draining, checks: results };
}
