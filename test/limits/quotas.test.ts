/**
 * Daily quotas and the long-poll cap through real gateways: memory writes in SQLite (with
 * embeddings from a loopback OpenAI-compatible server), a restart on the same data
 * directory, and event long polls through a real broker worker and Kafka.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { utcDay } from '../../gateway/limits/quotas.ts';
import { createTopic, produce, uniqueName } from '../broker-worker/support/kafka.ts';
import { compiledEntry } from '../support/compiled.ts';
import { type ConsumeData, callTool, startEventStack } from '../support/event-stack.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { openKeyStore, waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';
import {
  contractEmbeddingsEnv,
  type EmbeddingsServer,
  startEmbeddingsServer,
} from '../support/openai-embeddings.ts';

const root = join(import.meta.dirname, '../..');
let embeddings: EmbeddingsServer;
let dataDir: string;

before(async () => {
  embeddings = await startEmbeddingsServer({ apiKey: 'sk-test-secret' });
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-quota-'));
});
after(async () => {
  await embeddings?.close();
  await rm(dataDir, { recursive: true, force: true });
});

function memoryGateway(): Promise<TestGateway> {
  return startTestGateway({
    engine: 'node',
    dataDir,
    env: {
      ...contractEmbeddingsEnv(embeddings),
    },
  });
}

async function quotaUsage(dir: string, keyId: string): Promise<Record<string, number>> {
  const store = openKeyStore(dir);
  try {
    return await store.quotaUsage(keyId, utcDay());
  } finally {
    store.close();
  }
}

async function connect(url: string, namespace: string, key: string): Promise<Client> {
  const client = new Client({ name: 'quota-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/${namespace}/mcp`), {
      requestInit: { headers: { 'X-API-Key': key } },
    }),
  );
  return client;
}

test('a spent quota is a quota_exceeded tool error with the reset time, and survives a restart', async () => {
  let gw = await memoryGateway();
  const { key, id } = gw.withStore((store) =>
    store.create('quota', null, { limits: { quotas: { memory_write: 2, memory: 100 } } }),
  );
  let client = await connect(gw.url, 'memory', key);
  for (const n of [1, 2]) {
    const written = await callTool(client, 'memory_write', { content: `quota note ${n}`, tags: ['quota'] });
    assert.equal(written.isError, false, written.text);
  }
  const refused = await callTool(client, 'memory_write', { content: 'quota note 3', tags: ['quota'] });
  assert.equal(refused.isError, true);
  assert.match(
    refused.text,
    /^\[quota_exceeded\] Key key_\S+ has used its memory_write quota of 2 calls today/,
  );
  const reset = /resets at (\S+) /.exec(refused.text)?.[1] ?? '';
  assert.match(reset, /^\d{4}-\d{2}-\d{2}T00:00:00\.000Z$/);
  assert.ok(Date.parse(reset) > Date.now() && Date.parse(reset) - Date.now() <= 86_400_000);
  // Other memory tools still run: only memory_write is spent, and nothing of the refused write was stored.
  const listed = await callTool<{ memories: unknown[] }>(client, 'memory_list', {
    tags: ['quota'],
    limit: 0,
  });
  assert.equal(listed.data.memories.length, 2);
  await client.close();
  await gw.close();

  gw = await memoryGateway();
  try {
    client = await connect(gw.url, 'memory', key);
    const again = await callTool(client, 'memory_write', { content: 'after restart', tags: ['quota'] });
    assert.match(again.text, /^\[quota_exceeded\]/);
    await client.close();
  } finally {
    await gw.close();
  }

  const shown = await new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      [compiledEntry('gateway/keys/cli.ts'), 'show', id],
      { cwd: root, env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' } },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    ),
  );
  assert.match(shown, /memory_write: 2 of 2/);
  // memory counts every call in the namespace: three writes and a list, refused write included.
  assert.match(shown, /memory: [45] of 100/);
});

test('--max-polls: one poll more than the cap is a too_many_polls tool error that spends no quota; the cap frees when a poll ends', async () => {
  const kafka = testKafka();
  const stack = await startEventStack({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
  });
  try {
    // Before the key's first request, so the gateway's key cache reads the cap.
    // The event quota is there to show a poll the cap refuses costs none of it.
    stack.gw.withStore((store) =>
      store.setLimits(stack.gw.apiKeyId, { maxPolls: 1, quotas: { event: 1000 } }),
    );
    const topic = uniqueName('polls');
    await createTopic(kafka.plaintext, topic, 1);
    const first = await stack.mcp();
    const second = await stack.mcp();
    const holding = callTool<ConsumeData>(first, 'event_consume', {
      topic,
      from: 'latest',
      timeout_ms: 30_000,
    });
    // Retried until the long poll above holds the only place; each try is itself a short poll.
    let text = '';
    let admitted = 1;
    for (let tries = 0; tries < 50 && !text.startsWith('[too_many_polls]'); tries++) {
      text = (await callTool(second, 'event_consume', { topic, from: 'latest', timeout_ms: 200 })).text;
      if (!text.startsWith('[too_many_polls]')) admitted += 1;
    }
    assert.match(text, /^\[too_many_polls\] Key key_\S+ already has 1 event_consume call waiting/);
    for (let n = 0; n < 3; n++) {
      const refused = await callTool(second, 'event_consume', { topic, from: 'latest', timeout_ms: 200 });
      assert.match(refused.text, /^\[too_many_polls\]/);
    }
    // A message ends the long poll, which frees the place.
    let settled = false;
    void holding.finally(() => {
      settled = true;
    });
    let tries = 0;
    await waitFor(
      async () => {
        if (!settled) await produce(kafka.plaintext, topic, [{ value: `wake-${tries++}` }]);
        return settled;
      },
      { what: 'a produced message to end the long poll', timeoutMs: 25_000, intervalMs: 100 },
    );
    const ended = await holding;
    assert.equal(ended.isError, false, ended.text);
    assert.ok(ended.data.count >= 1);
    const next = await callTool(second, 'event_consume', { topic, from: 'latest', timeout_ms: 200 });
    assert.equal(next.isError, false, next.text);
    admitted += 1;
    // Only the polls that ran counted: the four refused ones left the quota as it was.
    assert.deepEqual(await quotaUsage(stack.gw.dataDir, stack.gw.apiKeyId), { event: admitted });
  } finally {
    await stack.close();
  }
});
