/**
 * One scrape for the whole gateway process and its broker workers: every registry's
 * getMetricsAsJSON() is gathered and merged by prom-client's AggregatorRegistry (counters
 * and histograms summed, default process metrics present in one source only). A worker
 * that does not answer in time is left out of this scrape rather than failing it.
 */
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

export async function mergedMetrics(
  sources: Array<Promise<unknown[]>>,
): Promise<{ contentType: string; text: string }> {
  const settled = await Promise.allSettled(sources);
  const parts = settled
    .filter((result): result is PromiseFulfilledResult<unknown[]> => result.status === 'fulfilled')
    .map((result) => result.value as MetricsJson);
  const merged = AggregatorRegistry.aggregate(parts);
  return { contentType: merged.contentType, text: await merged.metrics() };
}
