/**
 * Prometheus text read by a real parser (parse-prometheus-text-format, prom2json's shape),
 * with small lookups for tests. Sample values arrive as strings and are read as numbers here.
 */
import { createRequire } from 'node:module';

export interface Family {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: Array<{
    labels?: Record<string, string>;
    value?: string;
    count?: string;
    sum?: string;
    buckets?: Record<string, string>;
  }>;
}

const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => Family[];

export function parsePrometheus(text: string): Map<string, Family> {
  return new Map(parse(text).map((family) => [family.name, family]));
}

/**
 * The sum of a family's samples whose labels include `match`. For histograms it is their
 * observation count (the +Inf bucket); this parser only reads histograms without labels.
 */
export function total(
  families: Map<string, Family>,
  name: string,
  match: Record<string, string> = {},
): number {
  const family = families.get(name);
  if (!family) return 0;
  return family.metrics
    .filter((metric) => Object.entries(match).every(([label, value]) => metric.labels?.[label] === value))
    .reduce((sum, metric) => sum + Number(metric.value ?? metric.buckets?.['+Inf'] ?? 0), 0);
}

/** Every value a label takes across a family's samples. */
export function labelValues(families: Map<string, Family>, name: string, label: string): string[] {
  const values = (families.get(name)?.metrics ?? []).map((metric) => metric.labels?.[label] ?? '');
  return [...new Set(values)];
}
