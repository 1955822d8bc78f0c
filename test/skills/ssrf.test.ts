/**
 * Sources that point the gateway at its own network: loopback, the cloud metadata address,
 * userinfo and backslash tricks, given by the agent or planted in web search results. A
 * loopback server stands in for the internal service and must never see a request; the
 * GitHub contract server must see none for a refused source either. Real gateway, SDK client.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startFirecrawlContract } from '../support/contracts/firecrawl.ts';
import { type GitHubContract, startGitHubContract } from '../support/contracts/github.ts';
import { type LoopbackServer, startLoopback } from '../support/contracts/loopback.ts';
import type { TestGateway } from '../support/gateway.ts';
import {
  connectSkills,
  errorText,
  fixtureRepos,
  GITHUB_TOKEN,
  startSkillsGateway,
  structured,
} from '../support/skills-fixture.ts';

const FIRECRAWL_KEY = 'fc-ssrf-0123456789SECRET';
let internal: LoopbackServer;
let github: GitHubContract;
let firecrawl: LoopbackServer;
let gw: TestGateway;
let client: Client;

function hostileSources(): string[] {
  const { host, port } = new URL(internal.url);
  return [
    `${internal.url}/acme/kit`,
    `http://${host}:${port}/acme/kit/tree/main/skills/pdf-tools`,
    `http://localhost:${port}/acme/kit`,
    `http://[::1]:${port}/acme/kit`,
    'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
    'https://169.254.169.254/acme/kit',
    'http://metadata.google.internal/computeMetadata/v1/',
    `https://github.com@${host}:${port}/acme/kit`,
    `https://github.com:${port}/acme/kit`,
    `https://raw.githubusercontent.com.${host}.nip.io/acme/kit/main/SKILL.md`,
    `${host}:${port}/acme/kit`,
    `//${host}:${port}/acme/kit`,
  ];
}

before(async () => {
  internal = await startLoopback((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"AccessKeyId":"internal-secret"}');
  });
  github = await startGitHubContract(fixtureRepos('http://127.0.0.1:9'), GITHUB_TOKEN);
  firecrawl = await startFirecrawlContract(
    hostileSources().map((url, i) => ({ url, title: `tables skill ${i}`, description: 'x' })),
    FIRECRAWL_KEY,
  );
  gw = await startSkillsGateway({
    GITHUB_API_URL: github.api.url,
    GITHUB_RAW_URL: github.raw.url,
    GITHUB_TOKEN,
    FIRECRAWL_API_URL: firecrawl.url,
    FIRECRAWL_API_KEY: FIRECRAWL_KEY,
  });
  client = await connectSkills(gw);
});
after(async () => {
  await client.close();
  await gw.close();
  await firecrawl.close();
  await github.close();
  await internal.close();
});

test('every skills tool refuses a source on an internal address before any request', async () => {
  const githubBefore = github.api.requests.length + github.raw.requests.length;
  for (const source of hostileSources()) {
    for (const [name, extra] of [
      ['skills_get', {}],
      ['skills_read_file', { path: 'SKILL.md' }],
      ['skills_download', {}],
      ['skills_validate', {}],
    ] as const) {
      const text = errorText(await client.callTool({ name, arguments: { source, ...extra } }));
      assert.match(text, /^\[INVALID_ARGUMENT\]/, `${name} ${source}: ${text}`);
    }
  }
  assert.equal(internal.requests.length, 0, 'the internal service was never asked');
  assert.equal(github.api.requests.length + github.raw.requests.length, githubBefore);
});

test('web search results pointing inward are dropped without a request', async () => {
  const out = structured<{ results: unknown[]; problems: string[]; providers_used: string[] }>(
    await client.callTool({ name: 'skills_search', arguments: { query: 'tables', sources: ['web'] } }),
  );
  assert.deepEqual(out.providers_used, ['web']);
  assert.equal(firecrawl.count('POST /v2/search'), 1, 'the search itself ran');
  assert.deepEqual(out.results, []);
  assert.match(out.problems.join(' '), /web: 10 page\(s\) were not a GitHub folder/);
  assert.equal(internal.requests.length, 0, 'the internal service was never asked');
});
