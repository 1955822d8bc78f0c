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
