/**
 * Requests outside HTTP/1.1 as uWebSockets.js parses it: HTTP/1.0 (what many load-balancer
 * health checks send), HTTP/1.1 without `Host`, and bytes that are not HTTP. The node:http
 * engine answers each of them. A uWebSockets.js build answers them or not inside its own
 * parser, which JavaScript cannot reach; what each known build does is pinned here, so a
 * change of build shows up as a failing test rather than as load balancers marking the
 * gateway down. See docs/protocol.md, "HTTP behaviour at the edges".
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

/** What a raw exchange came to: every byte the server sent, and how the connection ended. */
interface Exchange {
  received: string;
  /** 'closed' when the server ended the connection. */
  ended: 'closed' | 'reset';
}

function exchange(port: number, bytes: string): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('error', () => resolve({ received, ended: 'reset' }));
    socket.on('close', () => resolve({ received, ended: 'closed' }));
  });
}

const REQUESTS = {
  'HTTP/1.0 health check': 'GET /healthz HTTP/1.0\r\n\r\n',
  'HTTP/1.0 with Host': 'GET /healthz HTTP/1.0\r\nHost: gateway\r\n\r\n',
  'HTTP/1.1 without Host': 'GET /healthz HTTP/1.1\r\nUser-Agent: probe\r\n\r\n',
  'not HTTP': 'hello there\r\n\r\n',
} as const;
type RequestName = keyof typeof REQUESTS;

/** The status line each request gets, or null: no byte, the connection closed by the server. */
type Expected = Record<RequestName, string | null>;

const NODE: Expected = {
  'HTTP/1.0 health check': 'HTTP/1.1 200 OK',
  'HTTP/1.0 with Host': 'HTTP/1.1 200 OK',
  'HTTP/1.1 without Host': 'HTTP/1.1 400 Bad Request',
  'not HTTP': 'HTTP/1.1 400 Bad Request',
};

/**
 * By uWebSockets.js build (docs/protocol.md lists them). A later parser (`uwebsockets@3.0.6` on npm)
 * answers 505/400 here but also 505s a valid HTTP/1.1 request whose request line arrives in
 * two TCP segments, so it is not used (docs/decisions/0010-uws-build-and-http-1-0.md).
 */
const UWS_BUILDS: Record<string, Expected> = {
  // Its parser accepts only HTTP/1.1 with Host and drops the rest silently when the
  // connection's idle timeout (about 10 s) ends.
  '@trufflesuite/uws-js-unofficial@20.30.0-unofficial.0': {
    'HTTP/1.0 health check': null,
    'HTTP/1.0 with Host': null,
    'HTTP/1.1 without Host': null,
    'not HTTP': null,
  },
};

function statusLine(received: string): string | null {
  return received === '' ? null : received.split('\r\n')[0]!;
}

for (const engine of ['node', 'uws'] as const) {
  describe(`requests outside HTTP/1.1 on the ${engine} engine`, () => {
    let gw: TestGateway;
    let expected: Expected;
    before(async () => {
      gw = await startTestGateway({ engine });
      const known = engine === 'node' ? NODE : UWS_BUILDS[gw.gateway.build];
      assert.ok(known, `record what ${gw.gateway.build} does with these requests in UWS_BUILDS`);
      expected = known;
    });
    after(() => gw.close());

    it('each request is answered as pinned for this build, and the server ends the connection', async () => {
      const names = Object.keys(REQUESTS) as RequestName[];
      // Side by side: a build that answers nothing holds each connection until its idle timeout.
      const outcomes = await Promise.all(names.map((name) => exchange(gw.port, REQUESTS[name])));
      names.forEach((name, i) => {
        const outcome = outcomes[i]!;
        assert.equal(
          statusLine(outcome.received),
          expected[name],
          `${name}: ${JSON.stringify(outcome.received)}`,
        );
        assert.equal(outcome.ended, 'closed', name);
      });
      // The node engine's HTTP/1.0 answer is the real health answer, not only a status.
      if (engine === 'node') assert.match(outcomes[0]!.received, /\{"status":"ok"\}$/);
    });

    it('a valid HTTP/1.1 request whose request line arrives in two TCP segments is answered', async () => {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(gw.port, '127.0.0.1', () => {
          socket.setNoDelay(true);
          socket.write('GET /hea');
          // The rest once the first segment was surely read on its own.
          setTimeout(() => socket.write('lthz HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n'), 200);
        });
        let received = '';
        socket.setEncoding('latin1');
        socket.on('data', (chunk: string) => {
          received += chunk;
        });
        socket.on('error', reject);
        socket.on('close', () => resolve(received));
      });
      assert.equal(statusLine(answer), 'HTTP/1.1 200 OK', JSON.stringify(answer));
    });
  });
}
