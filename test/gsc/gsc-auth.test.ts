/** gsc end to end (auth, gates, properties, sitemaps, errors, secrets): SDK client → gateway → loopback Google. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FULL, type GoogleContract, P, PREFIX_SITE, READONLY, SITE } from '../support/contracts/google.ts';
import { type GscStack, RO_EMAIL, startGscStack } from '../support/gsc-stack.ts';
import type { NamespaceClient } from '../support/mcp.ts';

let stack: GscStack;
let gc: GoogleContract;
let ro: NamespaceClient;
let rw: NamespaceClient;
let au: NamespaceClient;
let bare: NamespaceClient;
let broken: NamespaceClient;

before(async () => {
  stack = await startGscStack();
  ({ gc, ro, rw, au, bare, broken } = stack);
});
after(() => stack.close());

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
  const logs = stack.logLines.join('\n');
  assert.ok(logs.includes('upstream call'));
  const results = stack.clients.flatMap((c) => c.seen).join('\n');
  const all = [...stack.secrets, ...gc.tokens.keys()];
  assert.ok(all.length > 4);
  for (const secret of all) {
    assert.ok(!logs.includes(secret), 'secret in logs');
    assert.ok(!results.includes(secret), 'secret in results');
  }
  assert.ok(!logs.includes('PRIVATE KEY-----\nMII'));
});
