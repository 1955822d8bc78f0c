/**
 * TRUST_PROXY over real HTTP against the real gateway process, on both engines: the
 * forwarded client reaches the audit trail, the sign-in limiter and the logs when the peer
 * is a trusted proxy (127.0.0.1 here); from any other peer (127.0.0.2, another loopback
 * address on the same host) X-Forwarded-For is ignored, so it cannot be spoofed.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { clientAddressRule, parseTrustProxy } from '../../gateway/http/client-address.ts';
import { ENGINES, engineSkip } from '../support/engines.ts';
import { type GatewayProcess, runGatewayToExit, startGatewayProcess } from '../support/gateway-process.ts';
import { mintKey, waitFor } from '../support/harness.ts';
import { attributesOf, type OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver.ts';

const PROXY = '127.0.0.1';
const STRANGER = '127.0.0.2';

/** Linux answers on all of 127.0.0.0/8; other systems may need 127.0.0.2 configured first. */
const strangerSkip = await new Promise<string | false>((resolve) => {
  const probe = createServer();
  probe.once('error', () => resolve(`${STRANGER} is not a local address here`));
  probe.listen(0, STRANGER, () => probe.close(() => resolve(false)));
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request from a chosen local address (the gateway sees it as the peer). */
function send(
  url: string,
  from: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: options.method ?? 'GET',
      headers: options.headers,
      localAddress: from,
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A sign-in attempt with a wrong password, as a browser makes it: the form first, for its CSRF cookie. */
async function failSignIn(url: string, from: string, forwardedFor?: string): Promise<number> {
  const forwarded: Record<string, string> = forwardedFor ? { 'x-forwarded-for': forwardedFor } : {};
  const form = await send(`${url}/console/sign-in`, from, { headers: forwarded });
  const csrf = /name="csrf" value="([^"]+)"/.exec(form.body)?.[1];
  assert.ok(csrf, form.body);
  const cookie = ([] as string[])
    .concat(form.headers['set-cookie'] ?? [])
    .map((line) => line.split(';')[0])
    .join('; ');
  const answer = await send(`${url}/console/sign-in`, from, {
    method: 'POST',
    headers: {
      ...forwarded,
      cookie,
      origin: url,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ csrf, email: 'nobody@example.com', password: 'wrong' }).toString(),
  });
  return answer.status;
}

test('TRUST_PROXY entries: addresses, ranges of both families, loopback; the client is the rightmost untrusted hop', () => {
  const rule = clientAddressRule(parseTrustProxy(' 10.0.0.0/8, fd00::/8 ,192.0.2.1,loopback'));
  assert.equal(rule('10.1.1.1', '203.0.113.50, 2001:db8::7, fd00::1, 10.2.3.4'), '2001:db8::7');
  assert.equal(rule('::ffff:10.1.1.1', '198.51.100.7'), '198.51.100.7');
  assert.equal(rule('::1', '[2001:DB8:0:0::9]:443'), '2001:db8::9');
  assert.equal(rule('127.0.0.1', '198.51.100.7:5555'), '198.51.100.7');
  assert.equal(rule('192.0.2.1', '10.0.0.9, 10.0.0.8'), '10.0.0.9', 'every hop trusted: the leftmost');
  assert.equal(rule('192.0.2.1', 'unknown'), '192.0.2.1', 'an unreadable hop: the proxy that sent it');
  assert.equal(rule('192.0.2.2', '198.51.100.7'), '192.0.2.2', 'an untrusted peer is the client');
  assert.equal(rule('10.0.0.5', undefined), '10.0.0.5');
  assert.equal(clientAddressRule(null)('::ffff:198.51.100.7', '1.2.3.4'), '198.51.100.7');
  assert.equal(parseTrustProxy(undefined), null);
  for (const bad of ['10.0.0.0/33', '10.0.0', 'fd00::/129', 'proxy.internal', '10.0.0.1/', '10.0.0.1/x']) {
    assert.throws(
      () => parseTrustProxy(`127.0.0.1,${bad}`),
      (error: Error) => error.message.includes(`TRUST_PROXY: "${bad}" is not`),
      bad,
    );
  }
});

test('a bad TRUST_PROXY entry stops start-up naming the entry', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'trust-proxy-bad-'));
  try {
    const { code, output } = await runGatewayToExit({
      DATA_DIR: dataDir,
      TRUST_PROXY: '10.0.0.0/8,10.0.0.300',
    });
    assert.equal(code, 1, output);
    assert.match(output, /TRUST_PROXY: "10\.0\.0\.300" is not comma-separated IP addresses or CIDR ranges/);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

for (const engine of ENGINES) {
  describe(`TRUST_PROXY behind a proxy (${engine})`, { skip: engineSkip(engine) || strangerSkip }, () => {
    let dataDir: string;
    let auditPath: string;
    let gateway: GatewayProcess;
    let receiver: OtlpReceiver;
    let apiKey: string;

    before(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'trust-proxy-'));
      auditPath = join(dataDir, 'audit.log');
      apiKey = mintKey(dataDir, 'behind the proxy').key;
      receiver = await startOtlpReceiver();
      gateway = await startGatewayProcess({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_BSP_SCHEDULE_DELAY: '100',
        DATA_DIR: dataDir,
        BROKER_WORKERS: `unix:${join(dataDir, 'no-worker.sock')}`,
        HTTP_ENGINE: engine,
        MEMORY_EMBEDDINGS: 'none',
        AUDIT_LOG: `file:${auditPath}`,
        TRUST_PROXY: `${PROXY},10.0.0.0/8`,
        SIGNIN_ATTEMPTS_PER_MINUTE: '2',
      });
    });

    after(async () => {
      await gateway?.stop();
      await receiver?.close();
      await rm(dataDir, { recursive: true, force: true });
    });

    test('the server span names the forwarded client and the proxy that connected', async () => {
      const traceId = randomBytes(16).toString('hex');
      const answer = await send(`${gateway.url}/memory/mcp`, PROXY, {
        method: 'POST',
        headers: {
          'x-forwarded-for': '198.51.100.8',
          'x-api-key': apiKey,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(answer.status, 200, answer.body);
      const [span] = await receiver.waitFor((candidate) => candidate.traceId === traceId);
      const attributes = attributesOf(span!);
      assert.equal(attributes['client.address'], '198.51.100.8');
      assert.equal(attributes['network.peer.address'], PROXY);
    });

    const refusedFrom = async (from: string, forwardedFor: string) => {
      const marker = `trust-proxy-${Math.random().toString(36).slice(2)}`;
      const answer = await send(`${gateway.url}/memory/mcp`, from, {
        method: 'POST',
        headers: {
          'x-forwarded-for': forwardedFor,
          'content-type': 'application/json',
          'mcp-method': marker,
        },
        body: '{}',
      });
      assert.equal(answer.status, 401);
      return waitFor(
        async () => {
          const text = await readFile(auditPath, 'utf8').catch(() => '');
          const line = text.split('\n').find((candidate) => candidate.includes(marker));
          return line ? (JSON.parse(line) as { clientAddress: string }) : undefined;
        },
        { what: `the audit line of ${marker}`, timeoutMs: 15_000 },
      );
    };

    test("a trusted proxy's forwarded client is the audit trail's clientAddress", async () => {
      const record = await refusedFrom(PROXY, '203.0.113.66, 198.51.100.7, 10.9.8.7');
      assert.equal(record.clientAddress, '198.51.100.7');
    });

    test("an untrusted peer's X-Forwarded-For is ignored", async () => {
      const record = await refusedFrom(STRANGER, '198.51.100.7');
      assert.equal(record.clientAddress, STRANGER);
    });

    test('the sign-in limiter counts each forwarded client, and a stranger as itself whatever it forwards', async () => {
      assert.equal(await failSignIn(gateway.url, PROXY, '198.51.100.1'), 401);
      assert.equal(await failSignIn(gateway.url, PROXY, '198.51.100.1'), 401);
      assert.equal(await failSignIn(gateway.url, PROXY, '198.51.100.1'), 429);
      // Another user behind the same proxy is another client.
      assert.equal(await failSignIn(gateway.url, PROXY, '198.51.100.2'), 401);
      // A stranger changing its X-Forwarded-For stays one client.
      assert.equal(await failSignIn(gateway.url, STRANGER, '198.51.100.3'), 401);
      assert.equal(await failSignIn(gateway.url, STRANGER, '198.51.100.4'), 401);
      assert.equal(await failSignIn(gateway.url, STRANGER, '198.51.100.5'), 429);
      const logged = await waitFor(
        async () => {
          const lines = gateway.lines.filter((line) => line.includes('console sign-in refused'));
          return lines.length >= 7 ? lines : undefined;
        },
        { what: 'the refused sign-in log lines', timeoutMs: 15_000 },
      );
      assert.ok(
        logged.some((line) => line.includes('"remote":"198.51.100.2"')),
        logged.join('\n'),
      );
      assert.ok(!logged.some((line) => line.includes('198.51.100.3')), logged.join('\n'));
    });
  });
}
