/**
 * A stopping gateway behind a load balancer: until the balancer has seen /readyz fail it
 * still sends calls, some on keep-alive connections it already holds. During the drain
 * grace every such call gets an answer (503 shutting_down, `connection: close`, which the
 * balancer retries elsewhere) instead of a connection cut under it; after the grace the
 * listener is closed. Both HTTP engines, real sockets.
 */
import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import { test } from 'node:test';
import { ENGINES, engineSkip } from '../support/engines.ts';
import { startTestGateway } from '../support/gateway.ts';

interface Answer {
  status: number;
  connection: string | undefined;
  body: string;
}

function post(port: number, agent: Agent, apiKey: string): Promise<Answer> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/event/mcp',
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-api-key': apiKey,
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: text }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

for (const engine of ENGINES) {
  test(`${engine}: during the drain grace a call on a kept-alive connection and one on a new connection are answered 503, then the listener closes`, {
    skip: engineSkip(engine),
  }, async () => {
    const gw = await startTestGateway({ engine });
    const kept = new Agent({ keepAlive: true, maxSockets: 1 });
    const fresh = new Agent({ keepAlive: false });
    try {
      // The balancer's pooled connection: opened and left idle before the stop.
      assert.notEqual((await post(gw.port, kept, gw.apiKey)).status, 503);
      const drained = gw.gateway.drain(5_000, 1_500);
      const onKept = await post(gw.port, kept, gw.apiKey);
      const onNew = await post(gw.port, fresh, gw.apiKey);
      for (const answer of [onKept, onNew]) {
        assert.equal(answer.status, 503);
        assert.equal(answer.connection, 'close');
        assert.equal((JSON.parse(answer.body) as { error: string }).error, 'shutting_down');
      }
      assert.equal(await drained, true);
      await assert.rejects(post(gw.port, fresh, gw.apiKey), /ECONNREFUSED|ECONNRESET|socket hang up/);
    } finally {
      kept.destroy();
      fresh.destroy();
      await gw.close();
    }
  });
}
