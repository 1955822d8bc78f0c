/** Search analytics logic: dates in Pacific time, rows, totals, paging and period comparison. */
import { z } from 'zod';
import { UpstreamError } from '../../upstream/errors.ts';
import { addDays, daysBetween, isValidDate, pacificDate } from '../../upstream/pacific.ts';
import type { ApiRow, GscClient, QueryBody, QueryResponse } from './client.ts';

export const DIMENSIONS = ['query', 'page', 'country', 'device', 'searchAppearance', 'date', 'hour'] as const;
export const OPERATORS = [
  'equals',
  'contains',
  'notEquals',
  'notContains',
  'includingRegex',
  'excludingRegex',
] as const;
const SEARCH_TYPES = ['web', 'image', 'video', 'news', 'discover', 'googleNews'] as const;
const AGGREGATIONS = ['auto', 'byPage', 'byProperty', 'byNewsShowcasePanel'] as const;
const DATA_STATES = ['all', 'final', 'hourly_all'] as const;
/** The API's page limit for searchAnalytics.query. */
export const API_PAGE = 25_000;
/** Search Console keeps about 16 months. */
const MAX_DAYS = 540;

function canonical<T extends readonly string[]>(values: T, raw: string, what: string): T[number] {
  // Case and separators are ignored, so WEB, google_news and BY_PAGE all work as the origin allowed.
  const norm = (text: string) => text.toLowerCase().replace(/[\s_-]/g, '');
  const found = values.find((value) => norm(value) === norm(raw));
  if (!found) {
    throw new UpstreamError(
      'INVALID_ARGUMENT',
      `${what} ${JSON.stringify(raw)} is not one of ${values.join(', ')}.`,
    );
  }
  return found;
}

/** Origin compatibility: a comma-separated string or an array. */
export const listInput = z.union([z.string(), z.array(z.string())]);

function parseList(value: string | string[] | undefined): string[] {
  const items = Array.isArray(value) ? value : (value ?? '').split(',');
  return items.map((item) => item.trim()).filter(Boolean);
}

export function parseDimensions(
  value: string | string[] | undefined,
  fallback: string[] = ['query'],
): string[] {
  const list = parseList(value);
  const dims = (list.length ? list : fallback).map((d) => canonical(DIMENSIONS, d, 'dimension'));
  return [...new Set(dims)];
}

export const parseSearchType = (raw: string | undefined) =>
  raw ? canonical(SEARCH_TYPES, raw, 'search_type') : 'web';
const parseOperator = (raw: string | undefined) => (raw ? canonical(OPERATORS, raw, 'operator') : 'contains');
export const parseDataState = (raw: string | undefined, fallback: (typeof DATA_STATES)[number]) =>
  raw ? canonical(DATA_STATES, raw, 'data_state') : fallback;
/**
 * A request's dimensions, search type and data state, read in that order; the data state's
 * default may depend on the dimensions (hour needs hourly_all).
 */
export function parseRequest(
  args: { dimensions?: string | string[]; search_type?: string; data_state?: string },
  dimensionsFallback: string[] | undefined,
  stateFallback: (dimensions: string[]) => (typeof DATA_STATES)[number],
) {
  const dimensions = parseDimensions(args.dimensions, dimensionsFallback);
  const search_type = parseSearchType(args.search_type);
  return { dimensions, search_type, data_state: parseDataState(args.data_state, stateFallback(dimensions)) };
}
export const parseAggregation = (raw: string | undefined) =>
  raw ? canonical(AGGREGATIONS, raw, 'aggregation_type') : undefined;

export function checkDate(value: string, name: string): string {
  if (!isValidDate(value)) {
    throw new UpstreamError(
      'INVALID_ARGUMENT',
      `${name} must be a real date as YYYY-MM-DD; got ${JSON.stringify(value)}.`,
    );
  }
  return value;
}

/**
 * "Last N days" is exactly N complete Pacific-time days, ending yesterday in Pacific time
 * (Search Console's clock). Today is never complete.
 */
export function lastDays(
  nowMs: number,
  days: number | undefined,
): { start: string; end: string; days: number } {
  const n = days === undefined || days <= 0 ? 28 : days;
  if (n > MAX_DAYS) {
    throw new UpstreamError(
      'INVALID_ARGUMENT',
      `days must be at most ${MAX_DAYS} (Search Console keeps about 16 months).`,
    );
  }
  const end = addDays(pacificDate(nowMs), -1);
  return { start: addDays(end, -(n - 1)), end, days: n };
}

export function explicitRange(
  nowMs: number,
  start?: string,
  end?: string,
): { start: string; end: string; days: number } {
  const endDate = end ? checkDate(end, 'end_date') : addDays(pacificDate(nowMs), -1);
  const startDate = start ? checkDate(start, 'start_date') : addDays(endDate, -27);
  if (startDate > endDate) {
    throw new UpstreamError('INVALID_ARGUMENT', `start_date ${startDate} is after end_date ${endDate}.`);
  }
  return { start: startDate, end: endDate, days: daysBetween(startDate, endDate) + 1 };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export interface Row {
  keys?: Record<string, string>;
  clicks: number;
  impressions: number;
  /** Percent, 2 decimals (the API gives a fraction). */
  ctr: number;
  position: number;
}

export const rowSchema = z.object({
  keys: z.record(z.string(), z.string()).optional(),
  clicks: z.number(),
  impressions: z.number(),
  ctr: z.number(),
  position: z.number(),
});

export function mapRow(row: ApiRow, dimensions: string[]): Row {
  const out: Row = {
    clicks: row.clicks,
    impressions: row.impressions,
    ctr: round2(row.ctr * 100),
    position: round2(row.position),
  };
  if (dimensions.length && row.keys) {
    out.keys = Object.fromEntries(dimensions.map((d, i) => [d, row.keys?.[i] ?? '']));
  }
  return out;
}

/** Totals from rows: CTR from the sums, position weighted by impressions. */
export function totals(rows: Array<Pick<ApiRow, 'clicks' | 'impressions' | 'position'>>) {
  const clicks = rows.reduce((sum, r) => sum + r.clicks, 0);
  const impressions = rows.reduce((sum, r) => sum + r.impressions, 0);
  const weighted = rows.reduce((sum, r) => sum + r.position * r.impressions, 0);
  return {
    clicks,
    impressions,
    ctr: impressions ? round2((clicks / impressions) * 100) : 0,
    position: impressions ? round2(weighted / impressions) : 0,
  };
}

export const metadataSchema = z.object({
  first_incomplete_date: z.string().nullable(),
  first_incomplete_hour: z.string().nullable(),
});

export function metadataOf(response: QueryResponse) {
  return {
    first_incomplete_date: response.metadata?.firstIncompleteDate ?? null,
    first_incomplete_hour: response.metadata?.firstIncompleteHour ?? null,
  };
}

/**
 * Pages through searchAnalytics.query 25,000 rows at a time until the API runs dry or
 * `maxRows` is reached; `truncated` says rows were left behind.
 */
export async function fetchRows(
  client: GscClient,
  site: string,
  body: QueryBody,
  maxRows: number,
  signal: AbortSignal,
): Promise<{ rows: ApiRow[]; truncated: boolean; response: QueryResponse; pages: number }> {
  const rows: ApiRow[] = [];
  let startRow = body.startRow ?? 0;
  let last: QueryResponse = {};
  let pages = 0;
  while (rows.length < maxRows) {
    const rowLimit = Math.min(API_PAGE, maxRows - rows.length);
    last = await client.query(site, { ...body, rowLimit, startRow }, signal);
    pages++;
    const page = last.rows ?? [];
    rows.push(...page);
    if (page.length < rowLimit) return { rows, truncated: false, response: last, pages };
    startRow += page.length;
  }
  // Full last page: ask for one more row to learn whether anything was left behind.
  const probe = await client.query(site, { ...body, rowLimit: 1, startRow }, signal);
  return { rows, truncated: (probe.rows ?? []).length > 0, response: last, pages };
}

export function filterGroups(filters: Array<{ dimension: string; operator?: string; expression: string }>) {
  if (!filters.length) return undefined;
  return [
    {
      groupType: 'and' as const,
      filters: filters.map((f) => ({
        dimension: canonical(DIMENSIONS, f.dimension, 'filter dimension'),
        operator: parseOperator(f.operator),
        expression: f.expression,
      })),
    },
  ];
}

export const filterInput = z.object({
  dimension: z.string(),
  operator: z
    .string()
    .optional()
    .describe(`One of ${OPERATORS.join(', ')} (default contains).`),
  expression: z.string(),
});

export interface PeriodMetrics {
  clicks: number;
  impressions: number;
  ctr: number;
  position: number;
}

/**
 * Per-key deltas between two periods. A key present in one period only has `null` for the
 * other (not zeros), a null position delta, and a null percentage when the base is zero.
 */
export function comparePeriods(p1: Row[], p2: Row[]) {
  const keyOf = (row: Row) => JSON.stringify(row.keys ?? {});
  const map = new Map<
    string,
    { keys: Record<string, string>; period1: PeriodMetrics | null; period2: PeriodMetrics | null }
  >();
  const metrics = (row: Row): PeriodMetrics => ({
    clicks: row.clicks,
    impressions: row.impressions,
    ctr: row.ctr,
    position: row.position,
  });
  for (const row of p1) map.set(keyOf(row), { keys: row.keys ?? {}, period1: metrics(row), period2: null });
  for (const row of p2) {
    const existing = map.get(keyOf(row));
    if (existing) existing.period2 = metrics(row);
    else map.set(keyOf(row), { keys: row.keys ?? {}, period1: null, period2: metrics(row) });
  }
  return [...map.values()].map((entry) => {
    const c1 = entry.period1?.clicks ?? 0;
    const c2 = entry.period2?.clicks ?? 0;
    return {
      ...entry,
      status: entry.period1 && entry.period2 ? 'both' : entry.period1 ? 'only_period1' : 'only_period2',
      clicks_delta: c2 - c1,
      clicks_pct_change: c1 > 0 ? round2(((c2 - c1) / c1) * 100) : null,
      impressions_delta: (entry.period2?.impressions ?? 0) - (entry.period1?.impressions ?? 0),
      position_delta:
        entry.period1 && entry.period2 ? round2(entry.period2.position - entry.period1.position) : null,
    };
  });
}

const periodSchema = rowSchema.omit({ keys: true });
export const comparisonSchema = z.object({
  keys: z.record(z.string(), z.string()),
  period1: periodSchema.nullable(),
  period2: periodSchema.nullable(),
  status: z.string(),
  clicks_delta: z.number(),
  clicks_pct_change: z.number().nullable(),
  impressions_delta: z.number(),
  position_delta: z.number().nullable(),
});
