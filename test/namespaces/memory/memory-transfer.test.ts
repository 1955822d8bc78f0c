/**
 * `npm run memory -- import` and `export` on both state stores, as an operator runs them:
 * 10,000 memories go in, come out as they went in, go into a second key and come out byte
 * for byte the same, and a second import of the same file changes nothing. On a terminal
 * the import draws one progress line in place; in a pipe it prints plain lines.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { bothStateStores } from '../../support/state-stores.ts';
import { contents, type Env, exported, memoryCli, newKey, writeLines } from './transfer-support.ts';

const stores = bothStateStores('memory-transfer-');
const COUNT = 10_000;

/** Every field in use across the lines, in both spellings import takes (offsets, omitted defaults). */
function line(i: number): Record<string, unknown> {
  const line: Record<string, unknown> = { content: `note ${i}: the deploy of service ${i % 41} went fine` };
  if (i % 2 === 0) line.tags = [`team-${i % 7}`, 'deploys'];
  if (i % 3 === 0) line.metadata = { zone: `z${i % 4}`, build: String(i) };
  if (i % 5 === 0) line.namespace = 'ops';
  if (i % 4 === 1) line.key = `deploy-${i}`;
  if (i % 11 === 0) line.pinned = true;
  if (i % 97 !== 0)
    line.occurred_at =
      i % 2 === 0
        ? new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString()
        : `2024-06-0${1 + (i % 9)}T10:${String(i % 60).padStart(2, '0')}:00+02:00`;
  if (i % 13 === 0) line.expires_at = '2099-12-31T23:59:59.999Z';
  return line;
}

/** What export writes for a line: every field, defaults filled, metadata keys sorted, times in UTC. */
function expected(i: number, importedAt: { from: number; to: number }, out: Record<string, unknown>) {
  const given = line(i);
  const metadata = (given.metadata ?? {}) as Record<string, string>;
  const occurred = given.occurred_at as string | undefined;
  if (occurred === undefined) {
    // No event time: the import's own clock.
    const at = Date.parse(out.occurred_at as string);
    assert.ok(at >= importedAt.from && at <= importedAt.to, `line ${i + 1}: ${out.occurred_at}`);
  }
  return {
    content: given.content,
    tags: given.tags ?? [],
    metadata: Object.fromEntries(Object.entries(metadata).sort(([a], [b]) => a.localeCompare(b))),
    namespace: given.namespace ?? 'default',
    key: given.key ?? null,
    pinned: given.pinned ?? false,
    occurred_at: occurred === undefined ? out.occurred_at : new Date(occurred).toISOString(),
    expires_at: given.expires_at ?? null,
  };
}

function rateOf(stdout: string): number {
  const match = /\((\d+) memories\/s\)/.exec(stdout);
  assert.ok(match, stdout);
  return Number(match[1]);
}

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`memory import and export on ${kind}`, () => {
    test(`${COUNT} memories round trip losslessly, into a second key byte for byte, and a re-import changes nothing`, async (t) => {
      const env: Env = {
        ...stores[kind](),
        MEMORY_EMBEDDINGS: 'none',
        MEMORY_MAX_PER_KEY: String(2 * COUNT),
      };
      const [a, b] = [await newKey(env), await newKey(env)];
      const input = join(env.DATA_DIR, `${kind}-input.jsonl`);
      await writeLines(
        input,
        Array.from({ length: COUNT }, (_, i) => line(i)),
      );

      const from = Date.now();
      const first = await memoryCli(['import', input, '--key', a], env);
      const to = Date.now();
      assert.equal(first.code, 0, first.stderr);
      assert.match(
        first.stdout,
        new RegExp(
          `imported ${COUNT} memories into ${a} .*: ${COUNT} created, 0 updated, 0 unchanged; 0 bad lines skipped`,
        ),
      );
      assert.match(first.stdout, new RegExp(`${COUNT} memories wait for their embedding`));
      t.diagnostic(`${kind}: import rate ${rateOf(first.stdout)} memories/s (${COUNT} new memories)`);

      const out = await exported(env, a, env.DATA_DIR);
      const lines = out
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.equal(lines.length, COUNT);
      for (const [i, got] of lines.entries())
        assert.deepEqual(got, expected(i, { from, to }, got), `line ${i + 1}`);

      const copy = join(env.DATA_DIR, `${kind}-export.jsonl`);
      await writeLines(copy, out.trimEnd().split('\n'));
      const second = await memoryCli(['import', copy, '--key', b], env);
      assert.equal(second.code, 0, second.stderr);
      assert.equal(
        await exported(env, b, env.DATA_DIR),
        out,
        "the second key's export is the first's, byte for byte",
      );

      const again = await memoryCli(['import', input, '--key', a], env);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, new RegExp(`: 0 created, 0 updated, ${COUNT} unchanged;`));
      t.diagnostic(`${kind}: re-import rate ${rateOf(again.stdout)} memories/s (all unchanged)`);
      assert.equal(
        await exported(env, a, env.DATA_DIR),
        out,
        'a second import of the same file changes nothing',
      );
    });
  });
}

test('on a terminal the import redraws one progress line with its counts; in a pipe it prints plain lines', async () => {
  const env: Env = { ...stores.sqlite(), MEMORY_EMBEDDINGS: 'none', MEMORY_MAX_PER_KEY: '5000' };
  const key = await newKey(env);
  const file = join(env.DATA_DIR, 'tty.jsonl');
  await writeLines(file, [
    ...Array.from({ length: 1200 }, (_, i) => ({ content: `tty line ${i}` })),
    '{broken',
  ]);
  // script(1) gives the command a pseudo-terminal, so stderr.isTTY is true as in a shell.
  const command = `node bin/memory.mjs import ${file} --key ${key}`;
  const tty = await promisify(execFile)('script', ['-qec', command, '/dev/null'], {
    cwd: join(import.meta.dirname, '..', '..', '..'),
    env: { ...process.env, DATABASE_URL: '', ...env },
  }).catch((error: { stdout: string; code: number }) => error);
  assert.equal((tty as { code?: number }).code, 3, 'exit 3: a bad line was skipped');
  // The terminal's clear-line escape, made visible so the expressions below can name it.
  const screen = tty.stdout.replaceAll('\x1b[2K', '<clear>');
  assert.match(
    screen,
    /\r<clear>importing \[#+\.*\] +\d+% \d+\/1201, [\d.]+\/s \(\d+ created, 0 updated, 0 unchanged, 0 bad\)/,
  );
  // The bad line is printed above the bar, which is then drawn again.
  assert.match(screen, /\r<clear>line 1201: not JSON \(.*\); skipped\r?\n(\r<clear>)?importing \[/);
  assert.match(
    screen,
    /importing \[#{24}\] 100% 1201\/1201, [\d.]+\/s \(1200 created, 0 updated, 0 unchanged, 1 bad\)\r?\n/,
  );
  assert.match(
    screen,
    /imported 1200 memories into key_[\w-]+ in [\d.]+ s \(\d+ memories\/s\): 1200 created/,
  );

  const piped = await memoryCli(['import', file, '--key', key], env);
  assert.equal(piped.code, 3);
  assert.ok(
    !piped.stderr.includes('\r') && !piped.stderr.includes('\x1b'),
    'no carriage returns or escapes in a log',
  );
  assert.match(
    piped.stderr,
    /^importing \[#+\.*\] +\d+% \d+\/1201, [\d.]+\/s \(0 created, 0 updated, \d+ unchanged, 0 bad\)$/m,
  );
  assert.match(piped.stderr, /^line 1201: not JSON/m);
  assert.deepEqual(contents(await exported(env, key, env.DATA_DIR)).length, 1200);
});
