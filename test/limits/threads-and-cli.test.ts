/**
 * The rate limit across GATEWAY_THREADS listener threads of one real gateway process, and
 * the limit options of `npm run keys` run as an operator would run them.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { compiledEntry } from '../support/compiled.ts';
import { freePort, mintKey, waitFor } from '../support/harness.ts';

const root = join(import.meta.dirname, '../..');

function keysCli(dataDir: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [compiledEntry('gateway/keys/cli.ts'), ...args],
      { cwd: root, env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('three listener threads hold a key to its budget together, not three times over', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-limit-threads-'));
  const budget = 60;
  // Per minute: at most one more request refills during the run, so the count is near exact.
  const { key } = mintKey(dataDir, 'threads', null, {
    limits: { rate: { count: 1, per: 'min' }, burst: budget },
  });
  const port = await freePort();
  const child = spawn(process.execPath, [compiledEntry('gateway/main.ts')], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), GATEWAY_THREADS: '3', HTTP_ENGINE: 'uws' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    await waitFor(() => output.includes('listener threads'), {
      what: () => `the gateway to log its listener threads; it printed:\n${output}`,
      timeoutMs: 30_000,
    });
    assert.match(output, /serving from 3 listener threads/);
    // A new connection per request, many at once, so the kernel spreads them over the threads.
    const statuses = await Promise.all(
      Array.from({ length: budget * 3 }, (_, i) =>
        fetch(`http://127.0.0.1:${port}/event/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key, connection: 'close' },
          body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list' }),
        }).then(async (response) => {
          await response.arrayBuffer();
          return response.status;
        }),
      ),
    );
    const ok = statuses.filter((status) => status === 200).length;
    assert.equal(ok + statuses.filter((status) => status === 429).length, statuses.length);
    assert.ok(ok >= budget && ok <= budget * 1.1, `admitted ${ok} of a budget of ${budget}`);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, output);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('keys create/update/show/list carry limits; bad input is named and changes nothing', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-limit-cli-'));
  try {
    const created = await keysCli(dataDir, [
      'create',
      '--label',
      'fleet',
      '--rate',
      '20/s',
      '--burst',
      '40',
      '--quota',
      'gsc=1000/day,producthunt=500/day,memory_write=10000/day',
      '--max-polls',
      '2',
      '--json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const key = JSON.parse(created.stdout) as { id: string; key: string; limits: Record<string, unknown> };
    assert.deepEqual(key.limits, {
      rate: { count: 20, per: 's' },
      burst: 40,
      quotas: { gsc: 1000, producthunt: 500, memory_write: 10000 },
      maxPolls: 2,
    });

    const updated = await keysCli(dataDir, ['update', key.id, '--rate', '100/min', '--burst', '200']);
    assert.equal(updated.code, 0, updated.stderr);
    assert.match(updated.stdout, /rate 100\/min burst 200/);
    const listed = await keysCli(dataDir, ['list']);
    assert.match(listed.stdout, /100\/min burst 200/);
    assert.match(listed.stdout, /gsc=1000\/day/);

    const shown = await keysCli(dataDir, ['show', key.id]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /rate: +100\/min burst 200/);
    assert.match(shown.stdout, /max polls: +2/);
    assert.match(shown.stdout, /gsc: 0 of 1000/);
    assert.doesNotMatch(shown.stdout + listed.stdout, new RegExp(key.key));

    const lifted = await keysCli(dataDir, ['update', key.id, '--rate', 'none', '--max-polls', 'none']);
    assert.match(
      lifted.stdout,
      /rate none, quotas gsc=1000\/day,producthunt=500\/day,memory_write=10000\/day, max polls none/,
    );

    const cases: Array<[string[], RegExp]> = [
      [['update', key.id, '--rate', '20/hour'], /--rate: "20\/hour" is not a rate; use N\/s or N\/min/],
      [['update', key.id, '--burst', 'many'], /--burst: "many" is not a whole number above 0/],
      [
        ['update', key.id, '--quota', 'gsc=10/week'],
        /--quota: "gsc=10\/week" is not a quota; use name=N\/day/,
      ],
      [
        ['update', key.id, '--quota', 'email=10/day'],
        /--quota: no quota named email; quotas exist for event, gsc/,
      ],
      [['update', key.id, '--max-polls', '0'], /--max-polls: "0" is not a whole number above 0/],
      [['update', key.id, '--burst', '5'], /--burst needs a rate/],
      [['create', '--label', 'x', '--rate', 'fast'], /--rate: "fast" is not a rate/],
    ];
    for (const [args, message] of cases) {
      const result = await keysCli(dataDir, args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stdout}`);
      assert.match(result.stderr, message);
    }
    const missing = await keysCli(dataDir, ['update', 'key_nothere', '--rate', '5/s']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no key with id key_nothere; nothing was changed/);

    const after = JSON.parse((await keysCli(dataDir, ['list', '--json'])).stdout) as Array<{
      id: string;
      limits: unknown;
    }>;
    assert.equal(after.length, 1);
    assert.deepEqual(after[0]?.limits, {
      unlimited: true,
      quotas: { gsc: 1000, producthunt: 500, memory_write: 10000 },
    });
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
