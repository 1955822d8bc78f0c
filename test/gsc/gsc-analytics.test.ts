/** gsc end to end (search analytics, analyses, URL inspection): SDK client → gateway → loopback Google. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { addDays } from '../../gateway/upstream/pacific.ts';
import { BIG_SITE, type GoogleContract, P, SITE } from '../support/contracts/google.ts';
import { type GscStack, startGscStack } from '../support/gsc-stack.ts';
import type { NamespaceClient } from '../support/mcp.ts';

let stack: GscStack;
let gc: GoogleContract;
let ro: NamespaceClient;

before(async () => {
  stack = await startGscStack();
  ({ gc, ro } = stack);
});
after(() => stack.close());

const rows = (r: { data: Record<string, unknown> }) =>
  r.data.rows as Array<{ keys: Record<string, string>; clicks: number; ctr: number; position: number }>;
test('Pacific dates, exactly N complete days (origin bug: UTC, N+1 days ending today)', async () => {
  const r = await ro.call('gsc_search_analytics', {
    site_url: SITE,
    days: 7,
    dimensions: 'query,device',
    row_limit: 3,
  });
  assert.equal(r.isError, false, r.text);
  const end = addDays(gc.today, -1);
  assert.equal(r.data.end_date, end);
  assert.equal(r.data.start_date, addDays(end, -6));
  assert.deepEqual(gc.queries.at(-1)?.dimensions, ['query', 'device']);
  assert.deepEqual(rows(r)[0], {
    keys: { query: 'widgets', device: 'MOBILE' },
    clicks: 70,
    impressions: 700,
    ctr: 10,
    position: 3,
  });
  const arrayDims = await ro.call('gsc_search_analytics', { site_url: SITE, days: 7, dimensions: ['query'] });
  assert.equal(rows(arrayDims)[0]?.clicks, 105);
  const tooMany = await ro.call('gsc_search_analytics', { site_url: SITE, row_limit: 30_000 });
  assert.match(tooMany.text, /^\[INVALID_ARGUMENT\] row_limit must be at most 25000/);
});

test('metadata.firstIncompleteDate/Hour surfaced (origin bug: dropped)', async () => {
  const r = await ro.call('gsc_performance_overview', { site_url: SITE, days: 3 });
  assert.equal(
    (r.data.metadata as { first_incomplete_date: string }).first_incomplete_date,
    addDays(gc.today, -1),
  );
  assert.equal((r.data.totals as { clicks: number }).clicks, 3 * (10 + 5 + 0 + 5 + 1 + 1 + 3));
  assert.equal((r.data.daily_trend as unknown[]).length, 3);
  const hourly = await ro.call('gsc_query', { site_url: SITE, dimensions: ['hour'], days: 2 });
  assert.equal(hourly.data.data_state, 'hourly_all');
  assert.equal(
    (hourly.data.metadata as { first_incomplete_hour: string }).first_incomplete_hour,
    `${gc.today}T03:00:00-08:00`,
  );
  const wrong = await ro.call('gsc_query', { site_url: SITE, dimensions: ['hour'], data_state: 'final' });
  assert.match(wrong.text, /hour dimension needs data_state hourly_all/);
});

test('gsc_query: AND filters with all six operators, aggregation type, auto-paging past 25,000 rows', async () => {
  const q = (filters: unknown[]) =>
    ro.call('gsc_query', {
      site_url: SITE,
      days: 7,
      dimensions: ['query', 'page'],
      filters,
      aggregation_type: 'BY_PAGE',
    });
  const both = await q([
    { dimension: 'query', operator: 'includingRegex', expression: '^cheap' },
    { dimension: 'page', operator: 'notContains', expression: 'cheap' },
  ]);
  assert.deepEqual(
    rows(both).map((x) => x.keys),
    [{ query: 'cheap widgets', page: P('/widgets') }],
  );
  assert.equal(gc.queries.at(-1)?.aggregationType, 'byPage');
  const count = async (operator: string, expression: string) =>
    rows(await q([{ dimension: 'query', operator, expression }])).length;
  assert.equal(await count('equals', 'widgets'), 1);
  assert.equal(await count('notEquals', 'widgets'), 5);
  assert.equal(await count('contains', 'WIDGET'), 5);
  assert.equal(await count('excludingRegex', 'widget'), 1);
  const from = addDays(gc.today, -83);
  const all = await ro.call('gsc_query', {
    site_url: BIG_SITE,
    start_date: from,
    end_date: gc.today,
    dimensions: 'date,query',
    max_rows: 30_000,
  });
  assert.equal(all.isError, false, all.text.slice(0, 300));
  assert.equal(all.data.row_count, 25_200);
  assert.equal(all.data.pages_fetched, 2);
  assert.equal(all.data.truncated, false);
  const capped = await ro.call('gsc_query', {
    site_url: BIG_SITE,
    start_date: from,
    end_date: gc.today,
    dimensions: 'date,query',
    max_rows: 25_100,
  });
  assert.equal(capped.data.row_count, 25_100);
  assert.equal(capped.data.truncated, true);
  // The contract refuses what Google refuses.
  const token = [...gc.tokens.keys()][0];
  const raw = await fetch(`${gc.url}/webmasters/v3/sites/${encodeURIComponent(SITE)}/searchAnalytics/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ startDate: gc.today, endDate: gc.today, rowLimit: 25_001 }),
  });
  assert.equal(raw.status, 400);
});

test('advanced analytics keeps the origin arguments and says whether more rows exist', async () => {
  const r = await ro.call('gsc_advanced_search_analytics', {
    site_url: SITE,
    start_date: addDays(gc.today, -10),
    end_date: addDays(gc.today, -4),
    dimensions: 'query',
    search_type: 'WEB',
    row_limit: 2,
    start_row: 1,
    filter_dimension: 'query',
    filter_operator: 'contains',
    filter_expression: 'widget',
    sort_by: 'position',
    sort_direction: 'asc',
    data_state: 'FINAL',
  });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.data.has_more, true);
  assert.equal(r.data.next_start_row, 3);
  assert.deepEqual(r.data.filters_applied, [
    { dimension: 'query', operator: 'contains', expression: 'widget' },
  ]);
  const body = gc.queries.at(-1);
  assert.equal(body?.type, 'web');
  assert.equal(body?.dataState, 'final');
  const positions = rows(r).map((x) => x.position);
  assert.deepEqual(
    positions,
    [...positions].sort((a, b) => a - b),
  );
  const bad = await ro.call('gsc_advanced_search_analytics', { site_url: SITE, start_date: '2026-13-01' });
  assert.match(bad.text, /^\[INVALID_ARGUMENT\] start_date must be a real date/);
});

test('compare periods with keys in one period only (origin bug: zeros and position 0)', async () => {
  const r = await ro.call('gsc_compare_periods', {
    site_url: SITE,
    period1_start: addDays(gc.today, -70),
    period1_end: addDays(gc.today, -61),
    period2_start: addDays(gc.today, -10),
    period2_end: addDays(gc.today, -1),
    dimensions: 'query',
    limit: 20,
    search_type: 'web',
  });
  assert.equal(r.isError, false, r.text);
  const byQuery = new Map(
    (r.data.comparisons as Array<Record<string, unknown> & { keys: { query: string } }>).map((c) => [
      c.keys.query,
      c,
    ]),
  );
  const old = byQuery.get('old thing');
  assert.equal(old?.status, 'only_period1');
  assert.equal(old?.period2, null);
  assert.equal(old?.position_delta, null);
  assert.equal(old?.clicks_delta, -40);
  const fresh = byQuery.get('new thing');
  assert.equal(fresh?.status, 'only_period2');
  assert.equal(fresh?.clicks_pct_change, null);
  assert.equal(byQuery.get('widget guide')?.clicks_pct_change, -75);
  assert.deepEqual(r.data.summary, { keys: 6, only_period1: 1, only_period2: 1 });
});

test('page queries, opportunities, content decay and cannibalization', async () => {
  const page = await ro.call('gsc_search_by_page_query', {
    site_url: SITE,
    page_url: P('/widgets'),
    days: 7,
  });
  assert.deepEqual(
    rows(page).map((x) => x.keys.query),
    ['widgets', 'cheap widgets', 'blue widgets'],
  );
  assert.equal((page.data.totals as { impressions: number }).impressions, 7 * 400);
  const opp = await ro.call('gsc_find_opportunities', { site_url: SITE, min_impressions: 100 });
  assert.ok(
    (opp.data.low_ctr as Array<{ keys: { query: string } }>).some((x) => x.keys.query === 'blue widgets'),
  );
  assert.ok(
    (opp.data.striking_distance as Array<{ keys: { query: string } }>).some(
      (x) => x.keys.query === 'widget guide',
    ),
  );
  const decay = await ro.call('gsc_content_decay', { site_url: SITE, days: 28 });
  assert.deepEqual(decay.data.pages, [
    {
      page: P('/guide'),
      previous_clicks: 560,
      current_clicks: 140,
      clicks_lost: 420,
      drop_pct: 75,
      position_delta: 0,
    },
  ]);
  const cann = await ro.call('gsc_cannibalization', { site_url: SITE });
  const queries = cann.data.queries as Array<{ query: string; pages: Array<{ page: string }> }>;
  assert.deepEqual(
    queries.map((q) => q.query),
    ['cheap widgets'],
  );
  assert.deepEqual(
    queries[0]?.pages.map((p) => p.page),
    [P('/cheap'), P('/widgets')],
  );
});

test('batch inspection: up to 50 URLs, 5 at a time, per-URL errors (origin bug: 10, comma-split string)', async () => {
  const urls = [
    P('/a,b'),
    P('/blocked'),
    P('/dup'),
    'https://elsewhere.example/x',
    ...Array.from({ length: 8 }, (_, i) => P(`/p${i}`)),
  ];
  const r = await ro.call('gsc_check_indexing_issues', { site_url: SITE, urls: urls.join('\n') });
  assert.equal(r.isError, false, r.text);
  const summary = r.data.summary as Record<string, unknown>;
  assert.equal(summary.total, 12);
  assert.equal(summary.indexed, 10);
  assert.deepEqual(summary.robots_blocked, [P('/blocked')]);
  assert.deepEqual(summary.fetch_failed, [P('/blocked')]);
  assert.deepEqual(summary.canonical_mismatch, [P('/dup')]);
  assert.deepEqual(summary.errored, ['https://elsewhere.example/x']);
  assert.ok(
    gc.inspections.maxInFlight <= 5 && gc.inspections.maxInFlight > 1,
    String(gc.inspections.maxInFlight),
  );
  const batch = await ro.call('gsc_batch_inspect_urls', { site_url: SITE, urls: `${P('/a,b')}, ${P('/c')}` });
  assert.deepEqual(
    (batch.data.results as Array<{ url: string }>).map((x) => x.url),
    [P('/a,b'), P('/c')],
  );
  const tooMany = await ro.call('gsc_batch_inspect_urls', {
    site_url: SITE,
    urls: Array.from({ length: 51 }, (_, i) => P(`/${i}`)),
  });
  assert.match(tooMany.text, /^\[INVALID_ARGUMENT\] urls holds 51 URLs; at most 50/);
  const one = await ro.call('gsc_inspect_url', {
    site_url: SITE,
    page_url: P('/widgets'),
    language_code: 'de-DE',
  });
  assert.equal(one.data.verdict, 'PASS');
  assert.equal((one.data.rich_results as Array<{ type: string }>)[0]?.type, 'Breadcrumbs');
});
