export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)]!;
}

const round = (n: number) => Math.round(n * 100) / 100;

/** Calls per second and latency percentiles (ms) of a run. */
export function summarize(latenciesMs: number[], durationMs: number) {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return {
    calls: sorted.length,
    rps: Math.round((sorted.length / durationMs) * 1000),
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
  };
}

/**
 * A closed loop: `concurrency` callers each send the next call as soon as the last one
 * answered, for `durationMs`; the call is given a key cycling over 64 values.
 */
export async function closedLoop(
  concurrency: number,
  durationMs: number,
  call: (key: string) => Promise<unknown>,
) {
  const latencies: number[] = [];
  const ends = performance.now() + durationMs;
  let sequence = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < ends) {
        const started = performance.now();
        sequence += 1;
        await call(`k${sequence % 64}`);
        latencies.push(performance.now() - started);
      }
    }),
  );
  return summarize(latencies, durationMs);
}
