/**
 * What `npm run memory -- import` does with lines it cannot take, on both state stores: each
 * is reported by line number and reason and skipped (exit 3), or stops the import under
 * --strict (exit 1); either way every line before it stays imported. The cap stops an import
 * instead of evicting what it already wrote, and an unknown key id writes nothing.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { openMemoryStore } from '../../../gateway/namespaces/memory/engine.ts';
import { runCli } from '../../support/cli.ts';
import { bothStateStores } from '../../support/state-stores.ts';
import { contents, type Env, exported, memoryCli, newKey, writeLines } from './transfer-support.ts';

const stores = bothStateStores('memory-transfer-lines-');

/** One good line, then one of each kind of bad line, then a good one again. */
function mixedLines(): (object | string)[] {
  return [
    { content: 'first good line', key: 'g1' },
    '{not json',
    { content: 'x'.repeat(101) },
    { content: 'a field import does not know', colour: 'red' },
    { content: 'from the future', occurred_at: new Date(Date.now() + 3_600_000).toISOString() },
    { content: 'not a time', occurred_at: 'March 3rd' },
    '',
    { content: 'already expired', expires_at: '2020-01-01T00:00:00Z' },
    '[1, 2]',
    { content: 'last good line', tags: ['x'] },
  ];
}

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`memory import of bad lines on ${kind}`, () => {
    const env = (): Env => ({
      ...stores[kind](),
      MEMORY_EMBEDDINGS: 'none',
      MEMORY_MAX_CONTENT_CHARS: '100',
    });

    test('each bad line is named with its number and reason and skipped; the good ones are imported', async () => {
      const e = env();
      const key = await newKey(e);
      const file = join(e.DATA_DIR, `${kind}-mixed.jsonl`);
      await writeLines(file, mixedLines());
      const result = await memoryCli(['import', file, '--key', key], e);
      assert.equal(result.code, 3, result.stderr);
      const expectations: [number, RegExp][] = [
        [2, /not JSON \(.+\)/],
        [3, /content: Too big: expected string to have <=100 characters/],
        [4, /Unrecognized key: "colour"/],
        [5, /occurred_at is more than 5 minutes in the future/],
        [6, /occurred_at: Invalid ISO datetime/],
        [8, /expires_at: 2020-01-01T00:00:00Z has passed/],
        [9, /not a JSON object/],
      ];
      for (const [line, reason] of expectations)
        assert.match(
          result.stderr,
          new RegExp(`^line ${line}: ${reason.source}.*; skipped$`, 'm'),
          `line ${line}`,
        );
      assert.doesNotMatch(result.stderr, /^line (1|7|10):/m);
      assert.match(
        result.stdout,
        /imported 2 memories .*: 2 created, 0 updated, 0 unchanged; 7 bad lines skipped/,
      );
      assert.deepEqual(contents(await exported(e, key, e.DATA_DIR)), ['first good line', 'last good line']);
    });

    test('--strict stops at the first bad line and keeps the lines before it; a later run goes on', async () => {
      const e = env();
      const key = await newKey(e);
      const file = join(e.DATA_DIR, `${kind}-strict.jsonl`);
      await writeLines(file, mixedLines());
      const strict = await memoryCli(['import', file, '--key', key, '--strict'], e);
      assert.equal(strict.code, 1);
      assert.match(strict.stderr, /^line 2: not JSON .*; stopped \(--strict\)$/m);
      assert.doesNotMatch(strict.stderr, /^line 3:/m, 'nothing after the first bad line was read');
      assert.match(strict.stdout, /stopped after importing 1 memories .*: 1 created/);
      assert.deepEqual(contents(await exported(e, key, e.DATA_DIR)), ['first good line']);
      // Without --strict the same file adds the rest; the keyed line is not written twice.
      const rest = await memoryCli(['import', file, '--key', key], e);
      assert.equal(rest.code, 3);
      assert.match(rest.stdout, /: 1 created, 0 updated, 1 unchanged; 7 bad lines skipped/);
      assert.deepEqual(contents(await exported(e, key, e.DATA_DIR)), ['first good line', 'last good line']);
    });

    test('the cap stops the import at the line that needs room; nothing imported before it is evicted', async () => {
      const e: Env = { ...env(), MEMORY_MAX_PER_KEY: '3' };
      const key = await newKey(e);
      const file = join(e.DATA_DIR, `${kind}-cap.jsonl`);
      await writeLines(
        file,
        ['one', 'two', 'three', 'four', 'five'].map((content) => ({ content })),
      );
      const result = await memoryCli(['import', file, '--key', key], e);
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        /^line 4: the key holds MEMORY_MAX_PER_KEY \(3\) memories and an import never evicts; the import stopped here, lines from 4 on were not imported/m,
      );
      assert.deepEqual(contents(await exported(e, key, e.DATA_DIR)), ['one', 'two', 'three']);
    });

    test('a key id that does not exist (or is revoked) is refused with a clear line, and nothing is written for it', async () => {
      const e = env();
      const file = join(e.DATA_DIR, `${kind}-nokey.jsonl`);
      await writeLines(file, [{ content: 'for nobody' }]);
      const result = await memoryCli(['import', file, '--key', 'key_doesnotexist'], e);
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        /^no API key key_doesnotexist; `npm run keys -- list` shows the ids\. Nothing was imported\.$/m,
      );
      const exportFailed = await memoryCli(['export', '--key', 'key_doesnotexist'], e);
      assert.equal(exportFailed.code, 1);
      assert.match(exportFailed.stderr, /no API key key_doesnotexist/);
      const store = openMemoryStore(e.DATA_DIR, e.DATABASE_URL);
      try {
        assert.equal((await store.stats('key_doesnotexist', Date.now())).count, 0);
      } finally {
        await store.close();
      }
      // A revoked key: no caller could read what an import put there; its export still works.
      const revoked = await newKey(e);
      assert.equal((await runCli('keys', ['revoke', revoked], { env: e })).code, 0);
      const refusedRevoked = await memoryCli(['import', file, '--key', revoked], e);
      assert.equal(refusedRevoked.code, 1);
      assert.match(
        refusedRevoked.stderr,
        new RegExp(`^API key ${revoked} is revoked; nothing was imported\\.$`, 'm'),
      );
      assert.deepEqual(contents(await exported(e, revoked, e.DATA_DIR)), []);
      const missing = await memoryCli(['import', join(e.DATA_DIR, 'no-such.jsonl'), '--key', 'key_x'], e);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /^cannot read .*no-such\.jsonl: ENOENT/m);
    });
  });
}
