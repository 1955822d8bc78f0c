/**
 * A gateway process stopped with SIGTERM while a long group poll holds messages: the poll
 * answers with those messages (not an error, not nothing), the gateway exits, and the
 * messages are committed because the answer was written, so the group does not see them
 * again. Real gateway and broker-worker processes, real Kafka.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createTopic, groupOffsets, produce, uniqueName } from '../broker-worker/support/kafka.ts';
import { clientFor, startWorker, type WorkerProcess } from '../broker-worker/support/worker-process.ts';
import { type ConsumeData, callTool } from '../support/event-stack.ts';
import { startGatewayProcess } from '../support/gateway-process.ts';
import { mintKey, waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';

const kafka = testKafka();
let worker: WorkerProcess;
let dataDir: string;
let apiKey: string;

before(async () => {
  worker = await startWorker({
    BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
    // A poll that has messages keeps waiting for more until its own timeout, so the only
    // thing that can make it answer before then is the drain.
    BROKER_CONSUME_LINGER_MS: '30000',
  });
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-drain-'));
  apiKey = mintKey(dataDir, 'drain', 'test').key;
});
after(async () => {
  await worker.stop();
  await rm(dataDir, { recursive: true, force: true });
});

async function mcp(url: string): Promise<Client> {
  const client = new Client({ name: 'drain-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/event/mcp`), {
      requestInit: { headers: { 'X-API-Key': apiKey } },
    }),
  );
  return client;
}

test('SIGTERM during a long poll answers it with the messages it holds, committed after the answer', {
  timeout: 180_000,
}, async () => {
  const topic = uniqueName('drain');
  const group = uniqueName('drain-group');
  await createTopic(kafka.plaintext, topic, 1);
  const gw = await startGatewayProcess({ DATA_DIR: dataDir, BROKER_WORKERS: worker.address });
  const ipc = clientFor(worker.address);
  try {
    const client = await mcp(gw.url);
    // The group is joined before anything waits, so the poll below holds messages rather than a join.
    await waitFor(
      async () => {
        const joined = await callTool<ConsumeData & { joining?: boolean }>(client, 'event_consume', {
          topic,
          group,
          timeout_ms: 1000,
        });
        assert.equal(joined.isError, false, joined.text);
        return joined.data.joining === true ? undefined : true;
      },
      { what: 'the group to join', timeoutMs: 60_000, intervalMs: 100 },
    );
    await produce(kafka.plaintext, topic, [{ value: 'one' }, { value: 'two' }, { value: 'three' }]);
    const poll = callTool<ConsumeData & { hint?: string }>(client, 'event_consume', {
      topic,
      group,
      max: 100,
      timeout_ms: 30_000,
    });
    // The worker has fetched the three and the poll is waiting for more (linger 30 s).
    await waitFor(
      async () => {
        const status = await ipc.call('status', {}, { timeoutMs: 5000 });
        return status.bufferedMessages >= 3 ? true : undefined;
      },
      { what: 'the messages to be buffered for the poll', timeoutMs: 60_000, intervalMs: 100 },
    );

    const exitCode = await gw.stop();
    const answered = await poll;
    assert.equal(exitCode, 0, gw.lines.join('\n'));
    assert.equal(answered.isError, false, answered.text);
    assert.deepEqual(
      answered.data.messages.map((m) => m.value),
      ['one', 'two', 'three'],
    );
    assert.match(answered.data.hint ?? '', /shutting down/);
    await client.close().catch(() => undefined);

    // Written, so committed: the group's offset passed all three before the gateway exited.
    assert.equal((await groupOffsets(kafka.plaintext, group, topic))[0], '3');

    // A new gateway for the same group sees nothing of them again.
    const next = await startGatewayProcess({ DATA_DIR: dataDir, BROKER_WORKERS: worker.address });
    try {
      const nextClient = await mcp(next.url);
      const again = await callTool<ConsumeData>(nextClient, 'event_consume', {
        topic,
        group,
        timeout_ms: 1000,
      });
      await nextClient.close();
      assert.equal(again.isError, false, again.text);
      assert.equal(again.data.count, 0);
    } finally {
      assert.equal(await next.stop(), 0);
    }
  } finally {
    await ipc.close();
    await gw.stop();
  }
});
