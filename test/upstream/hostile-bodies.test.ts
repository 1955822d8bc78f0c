/**
 * Upstream bodies built to exhaust the gateway: a compression bomb that declares a small
 * Content-Length, and a body that never ends. The size cap must count the bytes the gateway
 * would hold (after decoding), and end an endless body itself rather than wait for the deadline.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { createLogger } from '../../gateway/logger.ts';
import { UpstreamError } from '../../gateway/upstream/errors.ts';
import { createUpstreamHttp } from '../../gateway/upstream/http.ts';
import { type LoopbackServer, startLoopback } from '../support/contracts/loopback.ts';

const INFLATED = 64 * 1024 * 1024;
const CAP = 1024 * 1024;
const gzipBomb = gzipSync(Buffer.alloc(INFLATED, 0x20), { level: 9 });
const brotliBomb = brotliCompressSync(Buffer.alloc(INFLATED, 0x20));
let endlessChunks = 0;

let server: LoopbackServer;
const http = createUpstreamHttp({ service: 'Hostile API', log: createLogger('silent'), maxRetries: 0 });

before(async () => {
  server = await startLoopback((req, res, raw) => {
    if (req.path === '/gzip' || req.path === '/br') {
      const body = req.path === '/gzip' ? gzipBomb : brotliBomb;
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': req.path === '/gzip' ? 'gzip' : 'br',
        'content-length': String(body.length),
      });
      res.end(body);
      return;
    }
    if (req.path === '/endless') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        let more = true;
        while (!raw.socket.destroyed && more) {
          endlessChunks++;
          more = res.write(chunk);
        }
        if (!raw.socket.destroyed) res.once('drain', pump);
      };
      pump();
      return;
    }
    res.writeHead(404).end();
  });
});
after(() => server.close());

async function refused(path: string): Promise<UpstreamError> {
  try {
    await http.request({
      method: 'GET',
      url: `${server.url}${path}`,
      route: `GET ${path}`,
      signal: new AbortController().signal,
      idempotent: true,
      maxResponseBytes: CAP,
      timeoutMs: 60_000,
    });
  } catch (error) {
    assert.ok(error instanceof UpstreamError, String(error));
    return error;
  }
  assert.fail(`${path} was accepted`);
}

test('a compression bomb is refused by the decoded size, though its Content-Length is small', async () => {
  assert.ok(gzipBomb.length < CAP && brotliBomb.length < CAP, 'the declared lengths pass the cap');
  for (const path of ['/gzip', '/br']) {
    const error = await refused(path);
    assert.equal(error.code, 'UPSTREAM_ERROR', `${path}: ${error.message}`);
    assert.match(error.message, /larger than 1048576 bytes/);
  }
});

test('a body that never ends is cut off at the cap, not left running until the deadline', async () => {
  const error = await refused('/endless');
  assert.equal(error.code, 'UPSTREAM_ERROR', error.message);
  assert.match(error.message, /larger than 1048576 bytes/);
  assert.ok(endlessChunks > 0, 'the server was streaming');
});
