/**
 * The skills namespace with nothing configured: mounted by default, the same tool list as when
 * fully configured, offline tools working, and every degraded answer saying what to set.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { TestGateway } from '../support/gateway.ts';
import { connectSkills, errorText, startSkillsGateway, structured } from '../support/skills-fixture.ts';

let gw: TestGateway;
let client: Client;

const ALL_TOOLS = [
  'skills_capabilities',
  'skills_download',
  'skills_find',
  'skills_get',
  'skills_read_file',
  'skills_search',
  'skills_validate',
];

before(async () => {
  gw = await startSkillsGateway({});
  client = await connectSkills(gw);
});
after(async () => {
  await client.close();
  await gw.close();
});

test('origin weakness: skills_find registered only with an OpenAI key — every tool is always listed', async () => {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((tool) => tool.name).sort(), ALL_TOOLS);
  assert.match(client.getInstructions() ?? '', /untrusted/);
  for (const tool of tools) assert.match(tool.description ?? '', /.{40,}/);
});

test('skills_capabilities reports each provider and its caps without a network call or a secret', async () => {
  const caps = structured<{
    ready: boolean;
    problems: string[];
    details: {
      providers: Array<{ name: string; ready: boolean; authenticated: boolean; note: string }>;
      caps: Record<string, number>;
    };
  }>(await client.callTool({ name: 'skills_capabilities', arguments: {} }));
  const byName = Object.fromEntries(caps.details.providers.map((provider) => [provider.name, provider]));
  assert.equal(byName.github?.ready, true, 'GitHub works anonymously');
  assert.equal(byName.github?.authenticated, false);
  assert.match(byName.github?.note ?? '', /GITHUB_TOKEN/);
  assert.equal(byName.registry?.ready, false);
  assert.match(byName.registry?.note ?? '', /SKILLS_REGISTRY_URL/);
  assert.equal(byName.openai?.ready, false);
  assert.equal(byName.curated?.ready, true);
  assert.equal(byName.firecrawl?.ready, false);
  assert.match(byName.firecrawl?.note ?? '', /FIRECRAWL_API_KEY/);
  assert.equal(caps.details.caps.find_requirements_max, 5);
  assert.deepEqual(caps.problems, []);
});

test('skills_search answers from the curated index and says which providers were skipped and why', async () => {
  const out = structured<{
    results: Array<{ name: string; found_by: string[]; get: { source: string } }>;
    providers_used: string[];
    providers_skipped: Array<{ provider: string; reason: string }>;
  }>(await client.callTool({ name: 'skills_search', arguments: { query: 'test driven development' } }));
  assert.deepEqual(out.providers_used, ['curated']);
  assert.deepEqual(out.providers_skipped.map((skip) => skip.provider).sort(), ['github', 'registry', 'web']);
  assert.match(
    out.providers_skipped.find((skip) => skip.provider === 'github')?.reason ?? '',
    /GITHUB_TOKEN/,
  );
  assert.equal(out.results[0]?.name, 'test-driven-development');
  assert.equal(out.results[0]?.get.source, 'obra/superpowers@main:skills/test-driven-development');
});

test('skills_find without an OpenAI key answers search-only and says so', async () => {
  const out = structured<{
    results: Array<{ mode: string; problems: string[]; model: unknown; candidates: unknown[] }>;
  }>(
    await client.callTool({
      name: 'skills_find',
      arguments: { requirements: ['make slides', 'debug a failing test'] },
    }),
  );
  assert.equal(out.results.length, 2);
  for (const result of out.results) {
    assert.equal(result.mode, 'search-only');
    assert.equal(result.model, null);
    assert.ok(result.problems.some((problem) => /OPENAI_API_KEY is not set/.test(problem)));
    assert.ok(result.candidates.length > 0);
  }
});

test('skills_validate checks text with no network', async () => {
  const good = structured<{ valid: boolean; name: string }>(
    await client.callTool({
      name: 'skills_validate',
      arguments: {
        skill_md: '---\nname: my-skill\ndescription: Does a thing.\n---\nBody\n',
        folder_name: 'my-skill',
      },
    }),
  );
  assert.deepEqual([good.valid, good.name], [true, 'my-skill']);
  const bad = structured<{ valid: boolean; errors: Array<{ code: string; message: string }> }>(
    await client.callTool({ name: 'skills_validate', arguments: { skill_md: '---\nname: My_Skill\n---\n' } }),
  );
  assert.equal(bad.valid, false);
  assert.deepEqual(bad.errors.map((error) => error.code).sort(), ['DESCRIPTION_MISSING', 'NAME_FORMAT']);
  assert.match(
    errorText(await client.callTool({ name: 'skills_validate', arguments: {} })),
    /exactly one of skill_md or source/,
  );
});

test('a source on a foreign host is refused before any network call', async () => {
  const text = errorText(
    await client.callTool({
      name: 'skills_get',
      arguments: { source: 'https://evilgithubusercontent.com/a/b/main/SKILL.md' },
    }),
  );
  assert.match(text, /INVALID_ARGUMENT.*not GitHub/);
});

test('a bad base URL: the namespace mounts, capabilities names the setting, and every other tool refuses naming it', async () => {
  const broken = await startSkillsGateway({ GITHUB_API_URL: 'not a url' });
  try {
    const c = await connectSkills(broken);
    const caps = structured<{ ready: boolean; problems: string[] }>(
      await c.callTool({ name: 'skills_capabilities', arguments: {} }),
    );
    assert.equal(caps.ready, false);
    assert.deepEqual(caps.problems, ['GITHUB_API_URL: must be an http(s) URL']);
    const { tools } = await c.listTools();
    assert.equal(tools.length, ALL_TOOLS.length);
    assert.match(
      errorText(await c.callTool({ name: 'skills_get', arguments: { source: 'a/b' } })),
      /GITHUB_API_URL: must be an http\(s\) URL/,
    );
    // Even what needs no GitHub refuses: a namespace runs on the settings it was given, or not at all.
    const search = await c.callTool({ name: 'skills_search', arguments: { query: 'pdf' } });
    assert.equal(search.isError, true);
    assert.equal((search._meta as Record<string, unknown>)['mcp-gateway/errorCode'], 'SETTINGS_INVALID');
    await c.close();
  } finally {
    await broken.close();
  }
});
