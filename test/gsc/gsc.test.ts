/** The gsc namespace end to end: SDK client → gateway → loopback Google token endpoint and Search Console. */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { addDays } from '../../gateway/upstream/pacific.ts';
import {
  BIG_SITE,
  FULL,
  type GoogleContract,
  P,
  PREFIX_SITE,
  READONLY,
  SITE,
  startGoogleContract,
} from '../support/contracts/google.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { connectNamespace, type NamespaceClient } from '../support/mcp.ts';

let gc: GoogleContract;
let dir: string;
const gateways: TestGateway[] = [];
const clients: NamespaceClient[] = [];
const logLines: string[] = [];
const secrets: string[] = [];
let ro: NamespaceClient;
let rw: NamespaceClient;
let au: NamespaceClient;
let bare: NamespaceClient;
let broken: NamespaceClient;
const RO_EMAIL = 'reader@test-project.iam.gserviceaccount.com';

async function open(env: Record<string, string>): Promise<NamespaceClient> {
  const gw = await startTestGateway({
    env: { LOG_LEVEL: 'trace', ...env },
    logDestination: { write: (line: string) => logLines.push(line) },
  });
  gateways.push(gw);
  const client = await connectNamespace(gw, 'gsc');
  clients.push(client);
  return client;
}

before(async () => {
  gc = await startGoogleContract();
  dir = await mkdtemp(join(tmpdir(), 'gsc-test-'));
  const urls = { GSC_API_BASE_URL: gc.url, GSC_OAUTH_TOKEN_URL: gc.tokenUrl };
  const readKey = gc.serviceAccount(RO_EMAIL);
  const writeKey = gc.serviceAccount('writer@test-project.iam.gserviceaccount.com');
  const user = gc.authorizedUser();
  secrets.push(
    readKey.private_key ?? '',
    writeKey.private_key ?? '',
    user.client_secret ?? '',
    user.refresh_token ?? '',
  );
  await writeFile(join(dir, 'reader.json'), JSON.stringify(readKey));
  await writeFile(join(dir, 'user.json'), JSON.stringify(user));
  ro = await open({ ...urls, GSC_CREDENTIALS_PATH: join(dir, 'reader.json'), GSC_DATA_STATE: 'all' });
  rw = await open({
    ...urls,
    GSC_CREDENTIALS_JSON: JSON.stringify(writeKey),
    GSC_ALLOW_WRITE: 'true',
    GSC_ALLOW_DESTRUCTIVE: 'true',
    GSC_IMPERSONATE_SUBJECT: 'admin@example.com',
  });
  au = await open({
    ...urls,
    GOOGLE_APPLICATION_CREDENTIALS: join(dir, 'user.json'),
    GSC_ALLOW_WRITE: 'true',
    GSC_ALLOWED_SITES: SITE,
  });
  bare = await open({ GSC_API_BASE_URL: gc.url });
  broken = await open({
    ...urls,
    GSC_CREDENTIALS_JSON: JSON.stringify({
      ...readKey,
      private_key: '-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n',
    }),
  });
});
after(async () => {
  for (const client of clients) await client.close();
  for (const gw of gateways) await gw.close();
  await gc.close();
  await rm(dir, { recursive: true, force: true });
});

const ORIGIN_TOOLS = [
  'gsc_capabilities',
  'gsc_list_properties',
  'gsc_get_site_details',
  'gsc_add_site',
  'gsc_delete_site',
  'gsc_search_analytics',
  'gsc_advanced_search_analytics',
  'gsc_performance_overview',
  'gsc_compare_periods',
  'gsc_search_by_page_query',
  'gsc_inspect_url',
  'gsc_batch_inspect_urls',
  'gsc_check_indexing_issues',
  'gsc_list_sitemaps',
  'gsc_get_sitemap',
  'gsc_submit_sitemap',
  'gsc_delete_sitemap',
];
const ADDED = ['gsc_query', 'gsc_find_opportunities', 'gsc_content_decay', 'gsc_cannibalization'];
const ARGS = {
  site_url: SITE,
  page_url: P('/widgets'),
  sitemap_url: P('/sitemap.xml'),
  urls: [P('/widgets')],
  period1_start: '2026-01-01',
  period1_end: '2026-01-07',
  period2_start: '2026-01-08',
  period2_end: '2026-01-14',
};
const rows = (r: { data: Record<string, unknown> }) =>
  r.data.rows as Array<{ keys: Record<string, string>; clicks: number; ctr: number; position: number }>;

test('tokens: one refresh in flight for concurrent calls, cached after, one forced refresh on 401', async () => {
  const mine = () => gc.grants.length;
  const results = await Promise.all([
    ro.call('gsc_list_properties'),
    ro.call('gsc_get_site_details', { site_url: SITE }),
    ro.call('gsc_list_sitemaps', { site_url: SITE }),
  ]);
  for (const r of results) assert.equal(r.isError, false, r.text);
  assert.equal(mine(), 1, 'one token for three concurrent calls');
  await ro.call('gsc_list_properties');
  assert.equal(mine(), 1, 'cached');
  gc.tokens.clear(); // Google revokes the token.
  assert.equal((await ro.call('gsc_list_properties')).isError, false);
  assert.equal(mine(), 2);
});

test('the same 21 tools with and without credentials; annotations match what each tool does', async () => {
  const listed = (await rw.client.listTools()).tools;
  assert.deepEqual(listed.map((t) => t.name).sort(), [...ORIGIN_TOOLS, ...ADDED].sort());
  assert.equal(JSON.stringify((await bare.client.listTools()).tools), JSON.stringify(listed));
  for (const tool of listed) {
    const a = tool.annotations ?? {};
    const del = tool.name.startsWith('gsc_delete');
    const write = ['gsc_add_site', 'gsc_submit_sitemap'].includes(tool.name);
    assert.equal(a.destructiveHint, del, tool.name);
    assert.equal(a.readOnlyHint, !del && !write, tool.name);
    assert.equal(a.openWorldHint, tool.name !== 'gsc_capabilities', tool.name);
  }
});

test('without or with malformed credentials every tool but capabilities answers NOT_CONFIGURED; the gateway runs', async () => {
  const before = gc.requests.length;
  for (const name of [...ORIGIN_TOOLS, ...ADDED].filter((n) => n !== 'gsc_capabilities')) {
    const r = await bare.call(name, ARGS);
    assert.equal(r.isError, true, name);
    assert.match(r.text, /^\[NOT_CONFIGURED\].*GSC_CREDENTIALS_JSON/, name);
  }
  const caps = await bare.call('gsc_capabilities');
  assert.equal(caps.data.configured, false);
  assert.equal(caps.data.ready, false);
  const bad = await broken.call('gsc_capabilities');
  assert.equal(bad.data.configured, true);
  assert.equal(bad.data.ready, false);
  assert.match(
    JSON.stringify(bad.data.problems),
    /GSC_CREDENTIALS_JSON service_account private_key is not a readable PEM/,
  );
  assert.match((await broken.call('gsc_list_properties')).text, /^\[NOT_CONFIGURED\].*PEM/);
  assert.equal(gc.requests.length, before, 'no network call');
});

test('read-only scope unless writes are enabled (origin bug: always full scope); subject for delegation', async () => {
  const caps = await ro.call('gsc_capabilities');
  assert.equal((caps.data.settings as { scope: string }).scope, READONLY);
  assert.equal(gc.grants[0]?.scope, READONLY);
  assert.equal((await rw.call('gsc_list_properties')).isError, false);
  const grant = gc.grants.at(-1);
  assert.equal(grant?.scope, FULL);
  assert.equal(grant?.sub, 'admin@example.com');
  assert.ok(!caps.text.includes('PRIVATE KEY'));
});

test('separate write and delete gates (origin bug: one gate for both)', async () => {
  const add = await ro.call('gsc_add_site', { site_url: 'sc-domain:new.example' });
  assert.match(add.text, /^\[PERMISSION_DENIED\].*GSC_ALLOW_WRITE=true/);
  const n = gc.requests.length;
  const del = await au.call('gsc_delete_sitemap', { site_url: SITE, sitemap_url: P('/sitemap.xml') });
  assert.match(del.text, /^\[PERMISSION_DENIED\].*GSC_ALLOW_DESTRUCTIVE=true/);
  assert.equal(gc.requests.length, n, 'refused before any call');
  // Writes allowed, but the authorized user's token carries the read-only scope: Google says so.
  const submit = await au.call('gsc_submit_sitemap', { site_url: SITE, sitemap_url: P('/new.xml') });
  assert.match(submit.text, /^\[PERMISSION_DENIED\].*scope/);
  assert.equal(
    (await rw.call('gsc_add_site', { site_url: 'sc-domain:new.example' })).data.message,
    'property added',
  );
  assert.equal(gc.sites.get('sc-domain:new.example'), 'siteUnverifiedUser');
  assert.equal(
    (await rw.call('gsc_delete_site', { site_url: 'sc-domain:new.example' })).data.message,
    'property removed',
  );
  assert.equal(gc.sites.has('sc-domain:new.example'), false);
  assert.equal(
    (await rw.call('gsc_submit_sitemap', { site_url: SITE, sitemap_url: P('/new.xml') })).isError,
    false,
  );
  assert.equal(
    (await rw.call('gsc_delete_sitemap', { site_url: SITE, sitemap_url: P('/new.xml') })).isError,
    false,
  );
  assert.equal(gc.sitemaps.get(SITE)?.length, 2);
});

test('percent-encoded sc-domain: and URL-prefix properties (origin bug)', async () => {
  const prefix = await ro.call('gsc_get_site_details', { site_url: PREFIX_SITE });
  assert.deepEqual(prefix.data, { site_url: PREFIX_SITE, permission_level: 'siteFullUser' });
  assert.ok(gc.requests.some((r) => r.path === '/webmasters/v3/sites/https%3A%2F%2Fwww.example.com%2F'));
  const sitemap = await ro.call('gsc_get_sitemap', { site_url: SITE, sitemap_url: P('/sitemap.xml') });
  assert.equal(sitemap.data.path, P('/sitemap.xml'));
  assert.ok(
    gc.requests.some(
      (r) =>
        r.path ===
        '/webmasters/v3/sites/sc-domain%3Aexample.com/sitemaps/https%3A%2F%2Fexample.com%2Fsitemap.xml',
    ),
  );
});

test('int64-as-string sitemap fields parsed to numbers (origin bug)', async () => {
  const list = await ro.call('gsc_list_sitemaps', { site_url: SITE });
  const first = (list.data.sitemaps as Array<Record<string, unknown>>)[0];
  assert.equal(first?.warnings, 3);
  assert.equal(first?.errors, 0);
  assert.deepEqual(first?.contents, [{ type: 'web', submitted: 120, indexed: 100 }]);
  const index = await ro.call('gsc_list_sitemaps', {
    site_url: SITE,
    sitemap_index: P('/sitemap_index.xml'),
  });
  assert.equal(index.data.count, 1);
});

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

test('allowlist, authorized-user refresh token, permission and quota errors', async () => {
  const props = await au.call('gsc_list_properties');
  assert.deepEqual(props.data.properties, [{ site_url: SITE, permission_level: 'siteOwner' }]);
  assert.ok(gc.grants.some((g) => g.grant === 'refresh_token'));
  assert.match(
    (await au.call('gsc_get_site_details', { site_url: PREFIX_SITE })).text,
    /^\[PERMISSION_DENIED\].*GSC_ALLOWED_SITES/,
  );
  const denied = await ro.call('gsc_get_site_details', { site_url: 'sc-domain:nobody.example' });
  assert.match(denied.text, new RegExp(`^\\[PERMISSION_DENIED\\].*${RO_EMAIL}.*Users and permissions`));
  const route = `POST /webmasters/v3/sites/${encodeURIComponent(SITE)}/searchAnalytics/query`;
  const rateBody = JSON.stringify({
    error: { code: 429, message: 'Rate limit exceeded', errors: [{ reason: 'rateLimitExceeded' }] },
  });
  gc.faults.push({ match: route, status: 429, headers: { 'retry-after': '0' }, body: rateBody });
  const n = gc.count(route);
  assert.equal((await ro.call('gsc_search_analytics', { site_url: SITE })).isError, false);
  assert.equal(gc.count(route), n + 2, 'retried once after Retry-After');
  const quotaBody = JSON.stringify({
    error: { code: 403, message: 'Quota exceeded', errors: [{ reason: 'quotaExceeded' }] },
  });
  gc.faults.push({ match: route, status: 403, body: quotaBody, times: 3 });
  assert.match((await ro.call('gsc_search_analytics', { site_url: SITE })).text, /^\[QUOTA_EXCEEDED\]/);
  assert.equal(gc.count(route), n + 3, 'quota errors are not retried');
  gc.faults.length = 0;
});

test('no private key, refresh token, client secret or access token reaches a log line or a result', () => {
  const logs = logLines.join('\n');
  assert.ok(logs.includes('upstream call'));
  const results = clients.flatMap((c) => c.seen).join('\n');
  const all = [...secrets, ...gc.tokens.keys()];
  assert.ok(all.length > 4);
  for (const secret of all) {
    assert.ok(!logs.includes(secret), 'secret in logs');
    assert.ok(!results.includes(secret), 'secret in results');
  }
  assert.ok(!logs.includes('PRIVATE KEY-----\nMII'));
});
