/** The producthunt namespace end to end: SDK client → gateway → loopback Product Hunt. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildSchema, parse, validate } from 'graphql';
import { ALL_QUERIES, GET_POST } from '../../gateway/namespaces/producthunt/queries.ts';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  DEV_TOKEN,
  type ProductHuntContract,
  startProductHuntContract,
} from '../support/contracts/producthunt.ts';
import { PRODUCTHUNT_SDL } from '../support/contracts/producthunt-schema.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { connectNamespace, type NamespaceClient } from '../support/mcp.ts';

let ph: ProductHuntContract;
const gateways: TestGateway[] = [];
const clients: NamespaceClient[] = [];
const logLines: string[] = [];
let dev: NamespaceClient;
let cc: NamespaceClient;
let bare: NamespaceClient;

async function open(env: Record<string, string>): Promise<NamespaceClient> {
  const gw = await startTestGateway({
    env: { LOG_LEVEL: 'trace', ...env },
    logDestination: { write: (line: string) => logLines.push(line) },
  });
  gateways.push(gw);
  const client = await connectNamespace(gw, 'producthunt');
  clients.push(client);
  return client;
}

before(async () => {
  ph = await startProductHuntContract();
  const urls = {
    PRODUCTHUNT_API_URL: ph.apiUrl,
    PRODUCTHUNT_TOKEN_URL: ph.tokenUrl,
    PRODUCTHUNT_TIMEOUT_MS: '2000',
  };
  dev = await open({ ...urls, PRODUCTHUNT_TOKEN: DEV_TOKEN });
  cc = await open({ ...urls, PRODUCTHUNT_CLIENT_ID: CLIENT_ID, PRODUCTHUNT_CLIENT_SECRET: CLIENT_SECRET });
  bare = await open({ PRODUCTHUNT_API_URL: ph.apiUrl });
});
after(async () => {
  for (const client of clients) await client.close();
  for (const gw of gateways) await gw.close();
  await ph.close();
});

const ORIGIN_TOOLS = [
  'producthunt_capabilities',
  'producthunt_list_posts',
  'producthunt_get_post',
  'producthunt_get_post_comments',
  'producthunt_list_topics',
  'producthunt_get_topic',
  'producthunt_list_collections',
  'producthunt_get_collection',
  'producthunt_get_user',
  'producthunt_viewer',
  'producthunt_graphql',
];
const ADDED_TOOLS = ['producthunt_leaderboard', 'producthunt_get_comment', 'producthunt_list_user_posts'];

test('the same 14 tools are listed with and without credentials, all read-only and open-world', async () => {
  const withCreds = (await dev.client.listTools()).tools;
  const without = (await bare.client.listTools()).tools;
  assert.deepEqual(withCreds.map((t) => t.name).sort(), [...ORIGIN_TOOLS, ...ADDED_TOOLS].sort());
  assert.deepEqual(JSON.stringify(without), JSON.stringify(withCreds));
  for (const tool of withCreds) {
    assert.equal(tool.annotations?.readOnlyHint, true, tool.name);
    assert.equal(tool.annotations?.destructiveHint, false, tool.name);
    assert.equal(tool.annotations?.openWorldHint, tool.name !== 'producthunt_capabilities', tool.name);
  }
});

test('without credentials every tool but capabilities answers NOT_CONFIGURED naming PRODUCTHUNT_TOKEN', async () => {
  const before = ph.requests.length;
  const args: Record<string, Record<string, unknown>> = {
    producthunt_get_comment: { id: 'c1' },
    producthunt_graphql: { query: '{ viewer { user { id } } }' },
  };
  for (const name of [...ORIGIN_TOOLS, ...ADDED_TOOLS].filter((n) => n !== 'producthunt_capabilities')) {
    const result = await bare.call(name, args[name] ?? { slug: 'bravo', username: 'ada' });
    assert.equal(result.isError, true, name);
    assert.match(result.text, /^\[NOT_CONFIGURED\].*PRODUCTHUNT_TOKEN/, name);
  }
  const caps = await bare.call('producthunt_capabilities');
  assert.equal(caps.isError, false);
  assert.equal(caps.data.ready, false);
  assert.equal(caps.data.configured, false);
  assert.match(JSON.stringify(caps.data.missing_settings), /PRODUCTHUNT_TOKEN/);
  assert.equal((caps.data.tools as unknown[]).length, 14);
  assert.equal(ph.requests.length, before, 'no upstream call was made');
});

test('capabilities with a token: ready, effective endpoint, no secret, no network', async () => {
  const before = ph.requests.length;
  const caps = await dev.call('producthunt_capabilities');
  assert.equal(caps.data.ready, true);
  assert.equal(caps.data.auth_source, 'PRODUCTHUNT_TOKEN');
  assert.equal((caps.data.settings as { api_url: string }).api_url, ph.apiUrl);
  assert.ok(!caps.text.includes(DEV_TOKEN));
  assert.equal(ph.requests.length, before);
});

test('every constant query validates against the SDL of the fields we use', () => {
  const schema = buildSchema(PRODUCTHUNT_SDL);
  for (const [name, document] of Object.entries(ALL_QUERIES)) {
    assert.deepEqual(
      validate(schema, parse(document)).map((e) => e.message),
      [],
      name,
    );
  }
});

test('comments order VOTES (origin bug): sent as VOTES_COUNT, which Product Hunt accepts; VOTES itself is rejected', async () => {
  const result = await dev.call('producthunt_get_post_comments', { slug: 'bravo', order: 'votes' });
  assert.equal(result.isError, false, result.text);
  assert.deepEqual(
    (result.data.comments as Array<{ id: string }>).map((c) => c.id),
    ['c1', 'c2'],
  );
  assert.equal(ph.documents.at(-1)?.variables.order, 'VOTES_COUNT');
  const newest = await dev.call('producthunt_get_post_comments', { slug: 'bravo', order: 'NEWEST' });
  assert.deepEqual(
    (newest.data.comments as Array<{ id: string }>).map((c) => c.id),
    ['c2', 'c1'],
  );
  // What the origin sent: the contract server refuses it like Product Hunt.
  const raw = await fetch(ph.apiUrl, {
    method: 'POST',
    headers: { authorization: `Bearer ${DEV_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      query: '{ post(slug: "bravo") { comments(order: VOTES) { totalCount } } }',
    }),
  });
  const body = (await raw.json()) as { errors: Array<{ message: string }> };
  assert.match(body.errors[0]?.message ?? '', /VOTES/);
});

test('redacted users (origin bug) are flagged redacted with null fields, not presented as facts', async () => {
  const post = await dev.call('producthunt_get_post', { slug: 'bravo' });
  assert.equal(post.isError, false, post.text);
  const hunter = post.data.user as Record<string, unknown>;
  assert.equal(hunter.redacted, true);
  assert.equal(hunter.name, null);
  assert.equal(hunter.id, null);
  const makers = post.data.makers as Array<Record<string, unknown>>;
  assert.deepEqual(
    makers.map((m) => [m.username, m.redacted]),
    [
      ['ada', false],
      [null, true],
    ],
  );
  const comment = await dev.call('producthunt_get_comment', { id: 'c1' });
  assert.equal((comment.data.user as { redacted: boolean }).redacted, true);
  assert.deepEqual(
    (comment.data.replies as Array<{ id: string }>).map((r) => r.id),
    ['c3'],
  );
  const other = await dev.call('producthunt_get_user', { username: 'someone-else' });
  assert.equal(other.data.redacted, true);
  assert.equal(other.data.headline, null);
});

test('raw GraphQL mutation (origin bug) and other non-queries are refused before any network call', async () => {
  const before = ph.requests.length;
  const refused: Array<[string, RegExp]> = [
    ['mutation { goalMarkAsComplete(goalId: "1") { ok } }', /Only queries.*mutation/],
    ['subscription { x }', /Only queries.*subscription/],
    ['query A { viewer { user { id } } } query B { viewer { user { id } } }', /exactly one operation/],
    ['{ viewer { user { madePosts { edges { node { topics { edges { node { id } } } } } } } } }', /nests/],
    [`{ viewer { user { id ${'name '.repeat(2000)} } } }`, /limit is 8000/],
    ['{ viewer { ', /does not parse/],
    ['type Foo { a: Int } { viewer { user { id } } }', /exactly one operation/],
  ];
  for (const [query, message] of refused) {
    const result = await dev.call('producthunt_graphql', { query });
    assert.equal(result.isError, true, query.slice(0, 40));
    assert.match(result.text, /^\[INVALID_ARGUMENT\]/);
    assert.match(result.text, message);
  }
  assert.equal(ph.requests.length, before);
  const ok = await dev.call('producthunt_graphql', {
    query: 'query Q($slug: String) { post(slug: $slug) { name } }',
    variables: { slug: 'alpha' },
  });
  assert.deepEqual(ok.data.data, { post: { name: 'Alpha' } });
});

test('inputs are variables of constant documents (origin interpolated strings)', async () => {
  const slug = 'x") { id } } mutation { goalMarkAsComplete(goalId: "1") { ok } } #';
  const result = await dev.call('producthunt_get_post', { slug });
  assert.match(result.text, /^\[NOT_FOUND\]/);
  const sent = ph.documents.at(-1);
  assert.equal(sent?.query, GET_POST);
  assert.equal(sent?.variables.slug, slug);
});

test('leaderboard: one Pacific-time day, featured only, ranked, across the DST switch', async () => {
  const result = await dev.call('producthunt_leaderboard', { date: '2026-03-08' });
  assert.equal(result.isError, false, result.text);
  assert.deepEqual(result.data.window, {
    start: '2026-03-08T08:00:00.000Z',
    end: '2026-03-09T07:00:00.000Z',
  });
  assert.deepEqual(
    (result.data.posts as Array<{ slug: string }>).map((p) => p.slug),
    ['charlie', 'bravo'],
  );
  const before = await dev.call('producthunt_leaderboard', { date: '2026-03-07' });
  assert.deepEqual(
    (before.data.posts as Array<{ slug: string }>).map((p) => p.slug),
    ['alpha'],
  );
  const bad = await dev.call('producthunt_leaderboard', { date: '2026-02-30' });
  assert.match(bad.text, /^\[INVALID_ARGUMENT\] date must be YYYY-MM-DD/);
});

test('list posts pages with cursors, filters by topic, and flattens topics', async () => {
  const first = await dev.call('producthunt_list_posts', { first: 2, order: 'newest' });
  assert.equal(first.isError, false, first.text);
  assert.equal(first.data.has_next_page, true);
  assert.equal(first.data.total_count, 6);
  const second = await dev.call('producthunt_list_posts', {
    first: 2,
    order: 'NEWEST',
    after: first.data.end_cursor,
  });
  const slugs = [
    ...(first.data.posts as Array<{ slug: string }>),
    ...(second.data.posts as Array<{ slug: string }>),
  ].map((p) => p.slug);
  assert.deepEqual(slugs, ['delta', 'charlie', 'echo', 'bravo']);
  const byTopic = await dev.call('producthunt_list_posts', { topic: 'developer-tools', first: 50 });
  const posts = byTopic.data.posts as Array<{ slug: string; topics: Array<{ slug: string }> }>;
  assert.deepEqual(posts.map((p) => p.slug).sort(), ['bravo', 'echo', 'flaky']);
  assert.deepEqual(posts[0]?.topics, [{ name: 'Developer Tools', slug: 'developer-tools' }]);
  assert.match(String(byTopic.data.untrusted_content), /untrusted/);
  const invalid = await dev.call('producthunt_list_posts', { order: 'POPULAR' });
  assert.equal(invalid.isError, true);
});

test('topics, collections, users and the viewer', async () => {
  const topics = await dev.call('producthunt_list_topics', {});
  assert.deepEqual(
    (topics.data.topics as Array<{ slug: string }>).map((t) => t.slug),
    ['developer-tools', 'artificial-intelligence'],
    'default order is FOLLOWERS_COUNT, as documented',
  );
  assert.equal(ph.documents.at(-1)?.variables.order, 'FOLLOWERS_COUNT');
  const topic = await dev.call('producthunt_get_topic', { slug: 'artificial-intelligence' });
  assert.equal(topic.data.name, 'Artificial Intelligence');
  const collections = await dev.call('producthunt_list_collections', { user_id: '101' });
  assert.equal((collections.data.collections as unknown[]).length, 1);
  const page1 = await dev.call('producthunt_get_collection', { id: 'k1', first: 3 });
  assert.equal((page1.data.posts as unknown[]).length, 3);
  const page2 = await dev.call('producthunt_get_collection', {
    id: 'k1',
    first: 3,
    after: (page1.data.posts_page as { end_cursor: string }).end_cursor,
  });
  assert.equal((page2.data.posts as unknown[]).length, 1);
  const user = await dev.call('producthunt_get_user', { username: 'ada', posts: 2 });
  assert.equal(user.data.redacted, false);
  assert.equal((user.data.made_posts as unknown[]).length, 2);
  for (const [kind, count] of [
    ['made', 3],
    ['voted', 2],
    ['submitted', 1],
  ] as const) {
    const listed = await dev.call('producthunt_list_user_posts', { username: 'ada', kind });
    assert.equal(listed.data.total_count, count, kind);
  }
  const viewer = await dev.call('producthunt_viewer');
  assert.equal(viewer.data.username, 'owner');
  const missing = await dev.call('producthunt_get_topic', {});
  assert.match(missing.text, /^\[INVALID_ARGUMENT\] Give id or slug/);
});

test('client credentials: token cached, refreshed after a 401 (origin bug: never refreshed); viewer explains', async () => {
  const tokenCalls = () => ph.count('POST /v2/oauth/token');
  const start = tokenCalls();
  assert.equal((await cc.call('producthunt_list_posts', {})).isError, false);
  assert.equal((await cc.call('producthunt_get_topic', { slug: 'developer-tools' })).isError, false);
  assert.equal(tokenCalls(), start + 1, 'one token for two calls');
  ph.issued.clear(); // Product Hunt revokes the cached token.
  const after = await cc.call('producthunt_list_posts', {});
  assert.equal(after.isError, false, after.text);
  assert.equal(tokenCalls(), start + 2);
  const viewer = await cc.call('producthunt_viewer');
  assert.match(viewer.text, /client-credentials tokens are application-level/);
});

test('upstream faults: 429 not retried, 5xx retried, partial errors kept, malformed JSON and slow answers reported', async () => {
  const graphqlCalls = () => ph.count('POST /v2/api/graphql');
  let n = graphqlCalls();
  ph.faults.push({ match: 'POST /v2/api/graphql', status: 500, times: 1 });
  assert.equal((await dev.call('producthunt_get_topic', { slug: 'developer-tools' })).isError, false);
  assert.equal(graphqlCalls(), n + 2);

  n = graphqlCalls();
  ph.faults.push({
    match: 'POST /v2/api/graphql',
    status: 429,
    headers: { 'X-Rate-Limit-Limit': '6250', 'X-Rate-Limit-Remaining': '5', 'X-Rate-Limit-Reset': '900' },
    body: '{"errors":[{"error":"rate_limit_reached"}]}',
  });
  const limited = await dev.call('producthunt_list_posts', {});
  assert.match(limited.text, /^\[RATE_LIMITED\].*Retry after 900 s/);
  assert.equal(graphqlCalls(), n + 1);

  const partial = await dev.call('producthunt_get_post', { slug: 'flaky' });
  assert.equal(partial.isError, false, partial.text);
  assert.equal(partial.data.description, null);
  assert.deepEqual((partial.data.graphql_errors as Array<{ path: string[] }>)[0]?.path, [
    'post',
    'description',
  ]);

  ph.faults.push({ match: 'POST /v2/api/graphql', status: 200, body: '<html>oops' });
  assert.match((await dev.call('producthunt_list_topics', {})).text, /^\[UPSTREAM_UNAVAILABLE\].*not JSON/);

  ph.faults.push({ match: 'POST /v2/api/graphql', hang: true });
  assert.match((await dev.call('producthunt_list_topics', {})).text, /^\[TIMEOUT\]/);
});

test('rate-limit headers (origin bug: ignored) are in every result and a spent budget is refused early', async () => {
  const client = await open({ PRODUCTHUNT_API_URL: ph.apiUrl, PRODUCTHUNT_TOKEN: DEV_TOKEN });
  ph.budget.remaining = 25;
  const first = await client.call('producthunt_list_topics', {});
  assert.deepEqual(first.data.rate_limit, { limit: 6250, remaining: 15, reset_in_s: 900 });
  const second = await client.call('producthunt_list_topics', {});
  assert.equal((second.data.rate_limit as { remaining: number }).remaining, 5);
  ph.budget.cost = 5;
  await client.call('producthunt_list_topics', {});
  const n = ph.count('POST /v2/api/graphql');
  const refused = await client.call('producthunt_get_topic', { slug: 'developer-tools' });
  assert.match(refused.text, /^\[RATE_LIMITED\].*resets in 9\d\d s/);
  assert.equal(ph.count('POST /v2/api/graphql'), n, 'refused without calling');
  ph.budget.remaining = 6250;
  ph.budget.cost = 10;
});

test('no token, client secret or issued token reaches a log line or a result', () => {
  const secrets = [DEV_TOKEN, CLIENT_SECRET, ...ph.everIssued];
  assert.ok(ph.everIssued.length >= 2);
  const logs = logLines.join('\n');
  assert.ok(logs.includes('upstream call'), 'upstream calls were logged');
  const results = clients.flatMap((c) => c.seen).join('\n');
  for (const secret of secrets) {
    assert.ok(!logs.includes(secret), 'secret in logs');
    assert.ok(!results.includes(secret), 'secret in results');
  }
});
