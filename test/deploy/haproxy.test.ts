/**
 * deploy/haproxy/: the error file HAProxy sends when no gateway is UP is a complete HTTP
 * response an MCP client can read (JSON, Retry-After, a Content-Length that fits the body),
 * HAProxy 2.6 itself accepts the configuration with it (`haproxy -c`), a configuration
 * without the file is refused, and docs/deployment.md shows the same directives as the
 * shipped haproxy.cfg (comments may differ). What callers get through HAProxy during an
 * outage is in test/fleet/lb-postgres-outage.test.ts and lb-redis-kill.test.ts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { findHaproxy, HAPROXY_503, HAPROXY_CONFIG, renderConfig } from '../support/haproxy.ts';

const exec = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const haproxy = await findHaproxy();
if (haproxy.skip) console.log(`# deploy/haproxy: haproxy -c skipped: ${haproxy.skip}`);

/** The directives of a configuration: comments and blank lines dropped, spaces kept as written. */
function directives(text: string): string[] {
  return text
    .split('\n')
    .map((line) =>
      line
        .replace(/\s+#.*$/, '')
        .replace(/^#.*$/, '')
        .trimEnd(),
    )
    .filter((line) => line.trim() !== '');
}

test('the 503 error file is a full HTTP response in JSON with Retry-After', async () => {
  const raw = await readFile(HAPROXY_503);
  // HAProxy keeps the file in one buffer (tune.bufsize, 16 kB by default).
  assert.ok(raw.length < 16_384, `${raw.length} bytes`);
  const text = raw.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  assert.ok(end > 0, 'headers end with CRLF CRLF');
  const [statusLine, ...headerLines] = text.slice(0, end).split('\r\n');
  assert.equal(statusLine, 'HTTP/1.1 503 Service Unavailable');
  const headers = new Map(
    headerLines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()] as const;
    }),
  );
  assert.equal(headers.get('content-type'), 'application/json');
  assert.match(headers.get('retry-after') ?? '', /^[1-9]\d*$/);
  assert.equal(headers.get('cache-control'), 'no-store');
  assert.equal(headers.get('connection'), 'close');
  const body = raw.subarray(Buffer.byteLength(text.slice(0, end + 4)));
  assert.equal(Number(headers.get('content-length')), body.length, 'Content-Length is the body');
  const json = JSON.parse(body.toString('utf8')) as { error?: unknown; message?: unknown };
  assert.equal(json.error, 'no_gateway_available');
  assert.match(String(json.message), /No MCP gateway .*Retry/);
});

test('docs/deployment.md shows the directives of deploy/haproxy/haproxy.cfg', async () => {
  const docs = await readFile(join(root, 'docs', 'deployment.md'), 'utf8');
  const block = /```haproxy\n([\s\S]*?)```/.exec(docs);
  assert.ok(block, 'docs/deployment.md has a haproxy block');
  assert.deepEqual(directives(block[1]!), directives(await readFile(HAPROXY_CONFIG, 'utf8')));
});

test('haproxy -c accepts the shipped configuration with its error file, and refuses it without', {
  skip: haproxy.skip ?? false,
}, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mcp-haproxy-check-'));
  try {
    const backends = [
      { address: '127.0.0.1:1', opsPort: 2 },
      { address: '127.0.0.1:3', opsPort: 4 },
    ];
    const config = renderConfig(await readFile(HAPROXY_CONFIG, 'utf8'), 1, backends, join(dir, 's.sock'));
    const check = async (text: string) => {
      const file = join(dir, 'haproxy.cfg');
      await writeFile(file, text);
      const env = { ...process.env, ...haproxy.env };
      return exec(haproxy.path!, ['-c', '-f', file], { env }).then(
        (out) => ({ ok: true, output: out.stdout + out.stderr }),
        (error: { stdout?: string; stderr?: string }) => ({
          ok: false,
          output: `${error.stdout}${error.stderr}`,
        }),
      );
    };
    const shipped = await check(config);
    assert.ok(shipped.ok, shipped.output);
    const missing = await check(config.replace(HAPROXY_503, join(dir, 'absent.http')));
    assert.ok(!missing.ok, 'a configuration naming an absent error file is refused');
    assert.match(missing.output, /absent\.http/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the test HAProxy fails loudly if the errorfile line it replaces has moved', () => {
  const template = 'stats socket /x\nbind :443 ssl crt /y\n    server host1 10.0.0.1:8080 check port 9464\n';
  assert.throws(
    () => renderConfig(template, 1, [{ address: '127.0.0.1:1', opsPort: 2 }], '/s'),
    /no line matching .*errorfile 503/,
  );
});
