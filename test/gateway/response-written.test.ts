/**
 * Both HTTP engines report whether a response reached the client's socket (onWritten):
 * group polls commit on `true` only, so a `true` for an answer the client never got
 * would lose messages, and a missing call would leave them waiting for the ack timeout.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import type { HttpEngine, HttpResponse, RequestContext } from '../../gateway/http/engine.ts';
import { selectEngine } from '../../gateway/http/select-engine.ts';
import { elapse, waitFor } from '../support/harness.ts';

const engines: Array<[string, HttpEngine]> = [['node', (await selectEngine('node')).engine]];
const uws = (await selectEngine('auto')).engine;
if (uws.name === 'uws') engines.push(['uws', uws]);

/** Serves one handler; collects every onWritten report. */
async function serve(
  engine: HttpEngine,
  respond: (ctx: RequestContext) => Promise<Omit<HttpResponse, 'onWritten'>>,
) {
  const reports: boolean[] = [];
  let settled: (ok: boolean) => void = () => undefined;
  const reported = new Promise<boolean>((resolve) => {
    settled = resolve;
  });
  const server = await engine.listen({ host: '127.0.0.1', port: 0, maxBodyBytes: 1024 }, async (ctx) => ({
    ...(await respond(ctx)),
    onWritten(ok) {
      reports.push(ok);
      settled(ok);
    },
  }));
  return { port: server.port, reports, reported, close: () => server.close() };
}

/** Sends a GET; reads the whole answer unless `read` is false. */
function request(port: number, read: boolean) {
  const socket = connect(port, '127.0.0.1');
  socket.write('GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
  let received = 0;
  if (read) socket.on('data', (chunk: Buffer) => (received += chunk.length));
  else socket.pause();
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { socket, closed, received: () => received };
}

for (const [name, engine] of engines) {
  describe(`${name} engine: onWritten`, () => {
    it('reports true once for an answer the client received, small or large', async () => {
      for (const size of [10, 4 * 1024 * 1024]) {
        const server = await serve(engine, async () => ({ status: 200, body: Buffer.alloc(size, 'a') }));
        const client = request(server.port, true);
        assert.equal(await server.reported, true);
        await client.closed;
        assert.ok(client.received() > size, 'the whole body arrived');
        // Elapsed time is the point: a second report would come within this window.
        await elapse(50);
        assert.deepEqual(server.reports, [true]);
        await server.close();
      }
    });

    it('reports false for an answer ready only after the client went away', async () => {
      let arrived = false;
      const server = await serve(engine, async (ctx) => {
        arrived = true;
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        return { status: 200, body: 'too late' };
      });
      const client = request(server.port, false);
      await waitFor(() => arrived, { what: 'the request to reach the handler' });
      client.socket.destroy();
      assert.equal(await server.reported, false);
      // Elapsed time is the point: a second report would come within this window.
      await elapse(50);
      assert.deepEqual(server.reports, [false]);
      await server.close();
    });

    it('reports false for a large answer the client stopped reading and then dropped', async () => {
      const server = await serve(engine, async () => ({
        status: 200,
        body: Buffer.alloc(32 * 1024 * 1024, 'b'),
      }));
      const client = request(server.port, false);
      // A 'readable' listener buffers one chunk and reads no further: the server stays stuck.
      let arriving = false;
      client.socket.once('readable', () => {
        arriving = true;
      });
      await waitFor(() => arriving, { what: 'the large answer to start arriving' });
      client.socket.destroy();
      assert.equal(await server.reported, false);
      // Elapsed time is the point: a second report would come within this window.
      await elapse(50);
      assert.deepEqual(server.reports, [false]);
      await server.close();
    });
  });
}
