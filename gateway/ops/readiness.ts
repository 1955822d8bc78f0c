/**
 * GET /readyz: whether this gateway should get traffic now. Each check is a real round trip
 * (a state-store query, a broker-worker status call, a Redis PING) with its own deadline,
 * run side by side so one hung dependency costs one deadline, not the sum.
 */

export type ReadinessCheck = () => Promise<unknown>;

export interface CheckResult {
  ok: boolean;
  /** Why it failed, for the operator reading the JSON; never holds a secret (URLs are not echoed). */
  error?: string;
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
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<ReadinessReport> {
  const names = Object.keys(checks);
  const settled = await Promise.allSettled(names.map((name) => withDeadline(checks[name]!, timeoutMs)));
  const results: Record<string, CheckResult> = {};
  names.forEach((name, index) => {
    const outcome = settled[index]!;
    results[name] =
      outcome.status === 'fulfilled'
        ? { ok: true }
        : { ok: false, error: String((outcome.reason as Error)?.message ?? outcome.reason).slice(0, 300) };
  });
  const allOk = Object.values(results).every((result) => result.ok);
  return { ready: allOk && !draining, draining, checks: results };
}
