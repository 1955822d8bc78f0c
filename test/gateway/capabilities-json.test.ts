/**
 * A `<name>_capabilities` answer reuses the encoding of its fixed part (the tool catalogue
 * and the error codes) and is answered from the worker's status of the moment. Over HTTP on
 * both engines and in both eras: the text content is byte for byte JSON.stringify of the
 * structuredContent, the catalogue is the namespace's tools/list, and a status that changes
 * between two calls shows in the second answer.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { capabilitiesOutput, mountNamespace } from '../../gateway/mcp/namespace-mount.ts';
import type { BrokerCalls } from '../../gateway/namespaces/event/broker-calls.ts';
import type { WorkerStatus } from '../../shared/ipc/messages.ts';
import { exampleNamespace } from '../namespaces/example/index.ts';
import type { TestGateway } from '../support/gateway.ts';
import { type Answer, base, gatewayForBlock, modern, post } from '../support/raw-mcp.ts';

const REACHABLE: WorkerStatus = {
  configured: true,
  missingSettings: [],
  brokerConfigured: true,
  credentialsConfigured: true,
  securityProtocol: 'PLAINTEXT',
  saslMechanism: null,
  bootstrapHosts: ['127.0.0.1:9092'],
  defaultTopic: 'tasks',
  defaultGroup: 'workers',
  topicAdminEnabled: false,
  lastBrokerError: null,
  brokerReachable: true,
  liveConsumers: 0,
  bufferedMessages: 0,
  workerId: 'capabilities-test',
};

/** A worker whose status is whatever the test last set: every call asks it afresh. */
function statusBroker(): BrokerCalls & { status: WorkerStatus } {
  const broker = {
    status: REACHABLE,
    call(method: string) {
      if (method === 'status') return Promise.resolve(broker.status);
      return Promise.reject(Object.assign(new Error('not in this test'), { code: 'WORKER_UNREACHABLE' }));
    },
  };
  return broker as BrokerCalls & { status: WorkerStatus };
}

/** The tool result of an answer, checked to be a success whose text is its structuredContent's JSON. */
function resultOf(answer: Answer): { text: string; structured: Record<string, unknown> } {
  assert.equal(answer.status, 200, answer.text);
  const { result } = answer.body;
  assert.equal(result.isError ?? false, false, answer.text);
  const text = result.content[0].text as string;
  // JSON.parse keeps the order of keys, so this is the very text JSON.stringify of the output gives.
  assert.equal(text, JSON.stringify(result.structuredContent));
  return { text, structured: result.structuredContent };
}

test("the answer's JSON is exactly JSON.stringify of the handler's output, settings problems included", async () => {
  for (const env of [{}, { EXAMPLE_MAX_NAME: 'many' }]) {
    const mounted = mountNamespace(exampleNamespace, env, {});
    const tool = (await mounted.tools()).find((candidate) => candidate.name === 'example_capabilities')!;
    const context = { caller: { apiKeyId: 'k' }, signal: new AbortController().signal, requestId: 'r' };
    for (let round = 0; round < 2; round++) {
      const output = (await tool.handler({}, context)) as Record<string, unknown>;
      const encoded = tool.outputJson?.(output);
      assert.equal(encoded?.json, JSON.stringify(output));
      assert.equal(encoded?.quoted, JSON.stringify(encoded?.json));
      assert.deepEqual(Object.keys(output), Object.keys(capabilitiesOutput.shape));
    }
  }
});

const call = (gw: TestGateway, name: string, id: number) =>
  callOn(gw, `/${name}/mcp`, `${name}_capabilities`, id);

for (const engine of ['uws', 'node'] as const) {
  describe(`capabilities answers on the ${engine} engine`, () => {
    let gw: TestGateway;
    const broker = statusBroker();
    gatewayForBlock({ engine, broker }, (started) => {
      gw = started;
    });

    test('every namespace: text is the structured JSON, byte for byte, and the catalogue is its tools/list', async () => {
      for (const name of gw.gateway.namespaces) {
        const path = `/${name}/mcp`;
        const first = await callOn(gw, path, `${name}_capabilities`, 1);
        const again = await callOn(gw, path, `${name}_capabilities`, 2);
        const { structured } = resultOf(first);
        // The fields in the order the contract declares them, as the handler builds them.
        assert.deepEqual(Object.keys(structured), Object.keys(capabilitiesOutput.shape), name);
        assert.equal(resultOf(again).text, resultOf(first).text, `${name}: the same state, the same answer`);
        // The whole 2025 answer is what JSON.stringify of the message gives.
        assert.equal(
          first.text,
          JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            result: {
              content: [{ type: 'text', text: JSON.stringify(structured) }],
              structuredContent: structured,
            },
          }),
        );
        const listed = await postList(gw, path);
        const names = (structured.tools as Array<{ name: string }>).map((tool) => tool.name);
        assert.deepEqual(names, listed, name);
        assert.ok((structured.error_codes as unknown[]).length > 0, name);
      }
    });

    test('event_capabilities answers from the status of the moment, in both eras', async () => {
      broker.status = REACHABLE;
      const before = resultOf(await call(gw, 'event', 3)).structured;
      assert.equal(before.ready, true);
      assert.deepEqual(before.problems, []);
      broker.status = {
        ...REACHABLE,
        brokerReachable: false,
        lastBrokerError: {
          message: 'Connection "refused" by 127.0.0.1:9092 — retrying 😀 \ud800\\',
          at: '2026-11-26',
        },
      };
      const after = resultOf(await call(gw, 'event', 4)).structured;
      assert.equal(after.ready, false);
      assert.deepEqual(after.problems, ['Connection "refused" by 127.0.0.1:9092 — retrying 😀 \ud800\\']);
      const modernAnswer = await modern(gw, 5, 'tools/call', { name: 'event_capabilities', arguments: {} });
      const now = resultOf(modernAnswer).structured;
      assert.deepEqual(now, after);
      broker.status = REACHABLE;
      assert.deepEqual(resultOf(await call(gw, 'event', 6)).structured, before);
    });
  });
}

const LEGACY: Array<[string, string]> = [['MCP-Protocol-Version', '2025-11-25']];

function callOn(gw: TestGateway, path: string, tool: string, id: number): Promise<Answer> {
  const message = { jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool } };
  return post(gw, [...base(gw), ...LEGACY], JSON.stringify(message), path);
}

async function postList(gw: TestGateway, path: string): Promise<string[]> {
  const message = { jsonrpc: '2.0', id: 9, method: 'tools/list' };
  const answer = await post(gw, [...base(gw), ...LEGACY], JSON.stringify(message), path);
  assert.equal(answer.status, 200, answer.text);
  return (answer.body.result.tools as Array<{ name: string }>).map((tool) => tool.name);
}
