/**
 * Many pipelined tools/list requests on one connection whose client reads nothing for a
 * while: the answers (pre-encoded, written in pieces) fill the socket and meet
 * backpressure, and every one must still arrive whole, in order, once the client reads.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as elapse } from 'node:timers/promises';
import { ENGINES, engineSkip } from '../support/engines.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { answersIn } from '../support/http-answers.ts';

const REQUESTS = 600;

type Answer = { id?: unknown; result?: { tools?: unknown[] } };

for (const engine of ENGINES) {
  describe(`pipelined answers read late on the ${engine} engine`, { skip: engineSkip(engine) }, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({ engine });
      // The namespace's first request builds its tools (decision 0190), which waits on module
      // loads; this test is about backpressure on answers already built, so that request is
      // made first, on its own connection.
      const warm = await fetch(`${gw.url}/event/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-api-key': gw.apiKey,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'tools/list' }),
      });
      assert.equal(warm.status, 200);
      await warm.text();
    });
    after(() => gw.close());

    test('every answer arrives whole and in order', { timeout: 120_000 }, async () => {
      const socket = connect(gw.port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.pause();
      let requests = '';
      for (let id = 1; id <= REQUESTS; id++) {
        const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' });
        requests +=
          'POST /event/mcp HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n' +
          `accept: application/json, text/event-stream\r\nx-api-key: ${gw.apiKey}\r\n` +
          `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      }
      socket.write(requests);
      // Nothing is read meanwhile, so the gateway's writes back up.
      await elapse(1000);
      const chunks: Buffer[] = [];
      const all = new Promise<Buffer>((resolve, reject) => {
        socket.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          const bytes = Buffer.concat(chunks);
          if (answersIn<Answer>(bytes).bodies.length === REQUESTS) resolve(bytes);
        });
        socket.once('close', () => reject(new Error('the connection closed before every answer came')));
      });
      socket.resume();
      const { bodies, rest } = answersIn<Answer>(await all);
      socket.destroy();
      assert.equal(rest, 0);
      assert.deepEqual(
        bodies.map((body) => body.id),
        Array.from({ length: REQUESTS }, (_, i) => i + 1),
      );
      for (const body of bodies) assert.equal(body.result?.tools?.length, 6);
    });
  });
}
