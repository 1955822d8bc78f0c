/**
 * The contract's deferred form (gateway/namespaces/deferred.ts): a namespace builds its
 * listing on its first request and loads what its tools run on at the first call. A real gateway process, watched by
 * the module witness, holds none of the memory store's code after tools/list on every
 * namespace and loads it on the first memory calls (two at once, both answered); tools/list
 * answers the same bytes before and after. The helper itself shares one load between
 * concurrent first calls and answers a failed load with an error naming the namespace,
 * then loads again on the next call. An idle gateway loads none of any namespace's tool
 * modules (nor node:http when it serves with uWS): each namespace's first request loads its own.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { z } from 'zod';
import { defineTool, type ToolContext, type ToolDefinition } from '../../gateway/mcp/tool.ts';
import { deferredParts, type LoadedParts } from '../../gateway/namespaces/deferred.ts';
import { startGatewayProcess } from '../support/gateway-process.ts';
import { mintKey } from '../support/harness.ts';
import { BASE, META, PV } from '../support/raw-mcp.ts';
import { moduleWitness } from '../support/witness.ts';

const NAMESPACES = ['event', 'gsc', 'memory', 'producthunt', 'skills'];

test('an idle gateway lists every namespace without loading the memory store; the first memory calls load it', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-deferred-'));
  const { env, loaded } = moduleWitness(dataDir, '/memory/');
  const { key } = mintKey(dataDir, 'deferred');
  const gateway = await startGatewayProcess({
    DATA_DIR: dataDir,
    BROKER_WORKERS: `unix:${join(dataDir, 'no-worker.sock')}`,
    MEMORY_EMBEDDINGS: 'none',
    ...env,
  });
  const post = async (namespace: string, body: object, headers: Record<string, string> = {}) => {
    const response = await fetch(`${gateway.url}/${namespace}/mcp`, {
      method: 'POST',
      headers: { ...BASE, 'x-api-key': key, ...headers },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 200, `${namespace} answered`);
    return response.text();
  };
  const lists = async () => {
    const answers: string[] = [];
    for (const namespace of NAMESPACES) {
      answers.push(await post(namespace, { jsonrpc: '2.0', id: 1, method: 'tools/list' }));
      answers.push(
        await post(
          namespace,
          { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: META } },
          { 'mcp-protocol-version': PV, 'mcp-method': 'tools/list' },
        ),
      );
    }
    return answers;
  };
  try {
    const before = await lists();
    assert.ok(
      before.every((answer) => answer.includes('"tools":[')),
      'every namespace listed its tools',
    );
    const idle = await loaded();
    assert.ok(
      idle.some((line) => line.includes('/memory/tools.')),
      'the witness sees memory modules (the listing) load',
    );
    assert.deepEqual(
      idle.filter((line) => /\/memory\/(store\/(?!common\.)|embeddings\/embedder|service|engine)/.test(line)),
      [],
      // store/common is the content hash the tools use; the rest of store/ is the store.
      'no store, embedder or service module before the first memory call',
    );

    const write = (content: string) =>
      post('memory', {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'memory_write', arguments: { content } },
      });
    // Two first calls at once: both wait on the one load and both are answered.
    const answers = await Promise.all([write('first of two at once'), write('second of two at once')]);
    for (const answer of answers) {
      assert.doesNotMatch(answer, /"isError":true/, answer);
      assert.match(answer, /"id\\":\\"[0-9a-f-]{36}/, answer);
    }
    const after = await loaded();
    assert.ok(
      after.some((line) => line.includes('/memory/store/sqlite-store.')),
      'the first call loaded the SQLite store',
    );
    assert.deepEqual(await lists(), before, 'tools/list answers the same bytes after the load');
  } finally {
    await gateway.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
});

/** Modules that build a namespace's tools (their zod schemas, descriptions) or run them. */
const TOOL_MODULES: Record<string, RegExp> = {
  event: /\/event\/(tools|provenance|lease-settler|capabilities)\.js$/,
  gsc: /\/gsc\/tools-[a-z]+\.js$/,
  memory: /\/memory\/(tools|schemas|embeddings\/minilm\/graph)\.js$/,
  producthunt: /\/producthunt\/tools\.js$/,
  skills: /\/skills\/tools(-files)?\.js$/,
};

test("an idle gateway holds no namespace's tools; a namespace's first request loads its own, and only its own", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-idle-'));
  const { env, loaded } = moduleWitness(dataDir, '/namespaces/,node:http');
  const { key } = mintKey(dataDir, 'idle');
  const gateway = await startGatewayProcess({
    DATA_DIR: dataDir,
    BROKER_WORKERS: `unix:${join(dataDir, 'no-worker.sock')}`,
    MEMORY_EMBEDDINGS: 'none',
    // The production engine: with uWS, node:http has no reason to load.
    HTTP_ENGINE: 'auto',
    ...env,
  });
  const toolModules = (lines: string[], namespace: string) =>
    lines.filter((line) => TOOL_MODULES[namespace]!.test(line));
  const list = async (namespace: string) => {
    const response = await fetch(`${gateway.url}/${namespace}/mcp`, {
      method: 'POST',
      headers: { ...BASE, 'x-api-key': key },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(response.status, 200, `${namespace} answered`);
    assert.match(await response.text(), /"tools":\[\{"name":"/);
  };
  try {
    const idle = await loaded();
    assert.ok(
      idle.some((line) => line.includes('/namespaces/gsc/index.')),
      'the witness sees the namespaces mounted',
    );
    for (const namespace of NAMESPACES)
      assert.deepEqual(
        toolModules(idle, namespace),
        [],
        `no ${namespace} tool module before its first request`,
      );
    if (gateway.lines.some((line) => line.includes('"engine":"uws"')))
      assert.deepEqual(
        idle.filter((line) => line.includes('node:http')),
        [],
        'a uWS gateway loads no node:http',
      );

    await list('gsc');
    const afterGsc = await loaded();
    assert.ok(toolModules(afterGsc, 'gsc').length >= 5, 'the first gsc request loaded its tool modules');
    for (const namespace of NAMESPACES.filter((name) => name !== 'gsc'))
      assert.deepEqual(
        toolModules(afterGsc, namespace),
        [],
        `gsc's first request loaded nothing of ${namespace}`,
      );
    await list('event');
    assert.ok(
      toolModules(await loaded(), 'event').some((line) => line.endsWith('/event/provenance.js')),
      'the first event request loaded its tools and what they run on',
    );
  } finally {
    await gateway.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
});

/** A one-tool namespace's live parts; `closed` records that close() ran. */
function liveParts(closed: string[]): LoadedParts {
  return {
    tools: [echoTool('live')],
    capabilities: async () => ({ ready: true, configured: true }),
    close: async () => {
      closed.push('live');
    },
  };
}

function echoTool(from: string): ToolDefinition {
  return defineTool({
    name: 'toy_echo',
    title: 'Echo',
    description: 'Echoes.',
    input: z.object({ text: z.string() }),
    output: z.object({ text: z.string(), from: z.string() }),
    annotations: { readOnlyHint: true },
    handler: async ({ text }) => ({ text, from }),
  });
}

const context = { caller: { apiKeyId: 'k' }, requestId: 'r' } as ToolContext;

test('concurrent first calls share one load; a failed load names the namespace and the next call loads again', async () => {
  let loads = 0;
  let fail = true;
  const closed: string[] = [];
  const parts = deferredParts({
    name: 'toy',
    listing: async () => [echoTool('listing')],
    load: async () => {
      loads += 1;
      await new Promise((resolve) => setImmediate(resolve));
      if (fail) throw new Error('Cannot find module ./engine.js');
      return liveParts(closed);
    },
  });
  const [tool] = await parts.tools();
  assert.equal(tool?.name, 'toy_echo');

  const failed = await Promise.allSettled([
    tool!.handler({ text: 'a' }, context),
    tool!.handler({ text: 'b' }, context),
  ]);
  assert.equal(loads, 1, 'two concurrent calls started one load');
  for (const outcome of failed) {
    assert.equal(outcome.status, 'rejected');
    assert.match(
      ((outcome as PromiseRejectedResult).reason as Error).message,
      /^toy could not be loaded: Cannot find module \.\/engine\.js$/,
    );
  }

  fail = false;
  const answers = await Promise.all([
    tool!.handler({ text: 'c' }, context),
    tool!.handler({ text: 'd' }, context),
    parts.capabilities(),
  ]);
  assert.equal(loads, 2, 'the next calls loaded again, once');
  assert.deepEqual(answers.slice(0, 2), [
    { text: 'c', from: 'live' },
    { text: 'd', from: 'live' },
  ]);
  assert.deepEqual(answers[2], { ready: true, configured: true });
  await parts.close();
  assert.deepEqual(closed, ['live'], 'close() closed the loaded parts');
});

test('a deferred namespace never loaded closes without loading; health answers from before-load until loaded', async () => {
  let loads = 0;
  const closed: string[] = [];
  const parts = deferredParts({
    name: 'toy',
    listing: async () => [echoTool('listing')],
    load: async () => {
      loads += 1;
      return { ...liveParts(closed), health: async () => ({ ok: false, detail: 'live answer' }) };
    },
    healthBeforeLoad: async () => ({ ok: true }),
  });
  assert.deepEqual(await parts.health!(), { ok: true });
  assert.equal(loads, 0, 'health before the first call did not load');
  await (await parts.tools())[0]!.handler({ text: 'x' }, context);
  assert.deepEqual(await parts.health!(), { ok: false, detail: 'live answer' });
  await parts.close();
  assert.deepEqual(closed, ['live']);

  const untouched = deferredParts({
    name: 'toy',
    listing: async () => [echoTool('listing')],
    load: async () => liveParts([]),
  });
  await untouched.close();
});
