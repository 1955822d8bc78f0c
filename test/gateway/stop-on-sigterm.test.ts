/**
 * A gateway process stopped with SIGTERM ends, and ends cleanly, whatever it was waiting on.
 * - A client left mid-upload: the request that waited on the rest of that body can no longer
 *   be answered, so it must not hold the drain. On uWS the body's promise was never settled
 *   when the client left (node:http missed a leave before the body was asked for), so the
 *   drain waited its whole DRAIN_MS on a request nobody could receive, then logged it as cut.
 * - The OTLP collector accepts connections and never answers: the last spans' flush used to
 *   hold the stop for the exporter's timeouts (30 s by default, as long as configured
 *   otherwise), then crash it with exit code 1.
 * - The backstop: a stop still going DRAIN_MS + 5 s after the signal is logged and exits 1.
 *   What holds it is a Postgres frozen (SIGSTOP: connections open, nothing answered) under a
 *   memory_write: the drain cuts the call, then closing the memory store waits on the
 *   connection whose query is never answered, up to the pool's 30 s query timeout.
 * Real gateway processes, raw sockets, a real TCP listener as the silent collector, a private
 * native Postgres.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { openStateStore } from '../../gateway/accounts/open.ts';
import { FULL_SCOPES } from '../../gateway/core/scopes.ts';
import { ENGINES, engineSkip } from '../support/engines.ts';
import { startGatewayProcess } from '../support/gateway-process.ts';
import { mintKey } from '../support/harness.ts';
import { startOwnPostgres } from '../support/own-postgres.ts';
import { postToolCall, postToolsList, toolsCallBody } from '../support/tool-call.ts';

let dataDir: string;
let apiKey: string;

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'stop-on-sigterm-'));
  apiKey = mintKey(dataDir, 'stop on sigterm').key;
});
after(() => rm(dataDir, { recursive: true, force: true }));

/** Resolves once `text` has arrived on the socket (or rejects if it closes first). */
function received(socket: Socket, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('latin1');
      if (!seen.includes(text)) return;
      socket.off('data', onData);
      resolve();
    };
    socket.on('data', onData);
    socket.once('close', () =>
      reject(new Error(`the connection closed before "${text.trim()}" (got ${seen})`)),
    );
  });
}

/**
 * Opens a connection and sends a POST's head with `expect: 100-continue`. Both engines answer
 * the 100 once the head is parsed and handed to the gateway, so when this resolves the
 * request is in flight, waiting on its body.
 */
async function headInFlight(gatewayUrl: string, path: string, key: string, body: string): Promise<Socket> {
  const socket = connect(Number(new URL(gatewayUrl).port), '127.0.0.1');
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  const continued = received(socket, 'HTTP/1.1 100 Continue\r\n');
  socket.write(
    `POST ${path} HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n` +
      `accept: application/json, text/event-stream\r\nx-api-key: ${key}\r\n` +
      `expect: 100-continue\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`,
  );
  await continued;
  return socket;
}

for (const engine of ENGINES) {
  test(`${engine}: a request whose client left mid-body does not hold the drain; SIGTERM exits 0`, {
    skip: engineSkip(engine),
    timeout: 120_000,
  }, async () => {
    const gw = await startGatewayProcess({
      DATA_DIR: dataDir,
      BROKER_WORKERS: `unix:${join(dataDir, 'no-worker.sock')}`,
      HTTP_ENGINE: engine,
      MEMORY_EMBEDDINGS: 'none',
    });
    const exited = new Promise<number | null>((resolve) => gw.child.once('exit', (code) => resolve(code)));
    try {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const socket = await headInFlight(gw.url, '/event/mcp', apiKey, body);
      socket.write(body.slice(0, 10));
      const closed = new Promise((resolve) => socket.once('close', resolve));
      socket.destroy();
      await closed;

      gw.child.kill('SIGTERM');
      const code = await exited;
      const log = gw.lines.join('\n');
      assert.equal(code, 0, log);
      assert.match(log, /gateway stopped/);
      assert.doesNotMatch(log, /requests still in flight at shutdown were cut/);
    } finally {
      gw.child.kill('SIGKILL');
    }
  });
}

/** A collector that takes connections and never answers. */
async function silentCollector(): Promise<{ endpoint: string; close(): Promise<void> }> {
  const held = new Set<Socket>();
  const server = createServer((socket) => {
    held.add(socket);
    socket.on('error', () => {});
    socket.once('close', () => held.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        for (const socket of held) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const EXPORTER_TIMEOUTS = {
  "the exporter's default timeouts": {},
  // The stop used to wait as long as these say: ten minutes.
  'exporter timeouts of ten minutes': {
    OTEL_EXPORTER_OTLP_TIMEOUT: '600000',
    OTEL_BSP_EXPORT_TIMEOUT: '600000',
  },
};

for (const [name, timeouts] of Object.entries(EXPORTER_TIMEOUTS)) {
  test(`a collector that never answers does not hold the stop (${name}); SIGTERM exits 0`, {
    timeout: 120_000,
  }, async () => {
    const collector = await silentCollector();
    const gw = await startGatewayProcess({
      DATA_DIR: dataDir,
      BROKER_WORKERS: `unix:${join(dataDir, 'no-worker.sock')}`,
      MEMORY_EMBEDDINGS: 'none',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      // Spans stay buffered until the stop flushes them.
      OTEL_BSP_SCHEDULE_DELAY: '600000',
      ...timeouts,
    });
    const exited = new Promise<number | null>((resolve) => gw.child.once('exit', (code) => resolve(code)));
    try {
      const answer = await postToolsList(`${gw.url}/event/mcp`, apiKey);
      assert.equal(answer.status, 200);
      await answer.text();

      gw.child.kill('SIGTERM');
      const code = await exited;
      const log = gw.lines.join('\n');
      assert.equal(code, 0, log);
      assert.match(
        log,
        /stopping without the last spans: the OTLP collector did not take the buffered spans/,
      );
      assert.match(log, /gateway stopped/);
    } finally {
      gw.child.kill('SIGKILL');
      await collector.close();
    }
  });
}

/** A key with every scope, made in the Postgres state store behind DATABASE_URL. */
async function postgresKey(databaseUrl: string): Promise<string> {
  const state = await openStateStore({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl });
  try {
    const owner = (await state.operatorAccount()).id;
    return (
      await state.createKey({ label: 'backstop', ownerId: owner, scopes: FULL_SCOPES, expiresAt: null })
    ).key;
  } finally {
    await state.close();
  }
}

test('a stop held by a frozen Postgres ends by the backstop: logged, exit 1', {
  timeout: 180_000,
}, async () => {
  const postgres = await startOwnPostgres();
  try {
    const gw = await startGatewayProcess({
      DATA_DIR: dataDir,
      DATABASE_URL: postgres.url,
      BROKER_WORKERS: `unix:${join(dataDir, 'no-worker.sock')}`,
      MEMORY_EMBEDDINGS: 'none',
      // The warm call's verdict must outlive the test: a key lookup must not reach the frozen server.
      API_KEY_CACHE_TTL_MS: '60000',
    });
    // Bounded: a stop that never ended shows as SIGKILL here, not as a hung test.
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
      const timer = setTimeout(() => gw.child.kill('SIGKILL'), 90_000);
      gw.child.once('exit', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal });
      });
    });
    try {
      const key = await postgresKey(postgres.url);
      const warm = await postToolCall(`${gw.url}/memory/mcp`, key, 'memory_write', { content: 'warm' });
      assert.equal(warm.status, 200);
      assert.doesNotMatch(await warm.text(), /"isError":true/);

      await postgres.freeze();
      // The call is in flight once its head is answered, so the drain waits on it.
      const body = toolsCallBody('memory_write', { content: 'while frozen' });
      const socket = await headInFlight(gw.url, '/memory/mcp', key, body);
      socket.write(body);

      gw.child.kill('SIGTERM');
      const { code, signal } = await exited;
      socket.destroy();
      const log = gw.lines.join('\n');
      assert.equal(signal, null, `the gateway did not exit by itself:\n${log}`);
      assert.equal(code, 1, log);
      assert.match(log, /requests still in flight at shutdown were cut/);
      assert.match(log, /"waitedMs":15000,"msg":"gateway did not finish stopping in time; exiting now"/);
      assert.doesNotMatch(log, /gateway stopped/);
    } finally {
      gw.child.kill('SIGKILL');
    }
  } finally {
    await postgres.thaw();
    await postgres.close();
  }
});
