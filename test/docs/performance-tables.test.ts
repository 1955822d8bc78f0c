/**
 * Every table in the performance pages (docs/performance.md, docs/performance-*.md) is
 * written by `npm run bench -- report` from the result files under bench/results/; a table edited by hand, or a result file rewritten by a bench
 * run without the report run after it, fails here. The checker is itself checked on small
 * inputs, so a change in how tables are found cannot make it pass by finding none.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { performanceDocs, renderDoc, renderDocs, staleTables } from '../../bench/report/index.ts';
import { memoryQualityTable, setsOf } from '../../bench/report/memory-quality.ts';
import type { ResultFile } from '../../bench/report/source.ts';
import { sourceLine } from '../../bench/report/source.ts';
import { TABLES, type TableSpec } from '../../bench/report/tables.ts';
import { outputWritersTable, toolCallsTable } from '../../bench/report/tool-calls.ts';

const paths = performanceDocs();
const docs = paths.map((path) => readFileSync(path, 'utf8'));

test('every table in the performance pages is what the report writes from bench/results/', () => {
  assert.ok(paths.length >= 4, `the pages are found: ${paths.join(', ')}`);
  const { texts, problems } = renderDocs(docs);
  assert.deepEqual(problems, []);
  const stale = docs.flatMap((doc, i) => staleTables(doc, texts[i]!));
  assert.deepEqual(stale, [], `run \`npm run bench -- report\`; these tables differ: ${stale.join(', ')}`);
  assert.ok(TABLES.length >= 10, 'the report knows the pages’ tables');
});

test('no table in the pages is left outside the markers', () => {
  // A Markdown table row outside every generated block would be a figure copied by hand.
  for (const doc of docs) {
    const outside = doc.replace(/<!-- table:([a-zA-Z0-9.-]+) -->\n[\s\S]*?<!-- \/table:\1 -->/g, '');
    const rows = outside.split('\n').filter((line) => /^\s*\|.*\|\s*$/.test(line));
    assert.deepEqual(rows, []);
  }
});

const fake = (data: Record<string, unknown>): ResultFile => ({ name: 'fake.json', data });
const run = (machine: Record<string, unknown>) => ({
  run: {
    date: '2026-11-29T05:00:00.000Z',
    machine: { cores: 2, cpu: 'AMD EPYC', memoryGb: 24, node: 'v20', ...machine },
  },
  value: 41,
});
const spec: TableSpec = {
  name: 'sample',
  sources: ['fake.json'],
  command: 'npm run bench -- sample',
  render: ([file]) => `| figure |\n| --- |\n| ${(file!.data as { value: number }).value} |`,
};

test('the checker finds a changed figure, a table with no generator and a generator with no table', () => {
  const load = () => fake(run({}));
  const empty = '<!-- table:sample -->\n<!-- /table:sample -->';
  const good = renderDoc(empty, [spec], load).text;
  assert.match(good, /\| 41 \|/);
  assert.deepEqual(staleTables(good, renderDoc(good, [spec], load).text), []);
  const edited = good.replace('| 41 |', '| 42 |');
  assert.deepEqual(staleTables(edited, renderDoc(edited, [spec], load).text), ['sample']);
  assert.deepEqual(renderDoc('<!-- table:other -->\n<!-- /table:other -->', [spec], load).problems, [
    'table:other has no generator in bench/report/tables.ts',
    'table:sample has no marker in the doc',
  ]);
  assert.deepEqual(renderDoc(`${empty}\n${empty}`, [spec], load).problems, ['table:sample appears twice']);
  // Across pages: a table on two pages is one too many, on none is missing.
  assert.deepEqual(renderDocs([empty, empty], [spec], load).problems, ['table:sample appears twice']);
  assert.deepEqual(renderDocs(['no tables', 'none here'], [spec], load).problems, [
    'table:sample has no marker in the doc',
  ]);
});

test('a source line names the date, the machine, the commit and the command', () => {
  assert.equal(
    sourceLine(fake(run({})), 'npm run bench -- sample'),
    'Source: `bench/results/fake.json`, run 2026-11-29 05:00 UTC; 2 cores AMD EPYC, 24 GiB, Node v20; commit not recorded; `npm run bench -- sample`.',
  );
  const recorded = sourceLine(fake(run({ commit: 'abc1234', command: 'npm run bench -- ops --quick' })), 'x');
  assert.match(recorded, /; commit abc1234; `npm run bench -- ops --quick`\.$/);
});

const report = (hitAt1: number) => ({
  questions: 10,
  hitAt1,
  hitAt5: 0.9,
  mrr: 0.5,
  byType: {},
  newestFirst: null,
  abstention: { precision: 0.2, recall: 0.3, falseAlarm: 0.1 },
  falseEmpty: 0,
  claimsNothingStored: 0,
  p50Ms: 1,
  p99Ms: 2,
});
const chosen = {
  settings: {
    fusion: 'convex',
    vectorWeight: 0.7,
    weakBelow: 0.55,
    hideBelow: 0.08,
    newerWithin: 0.05,
    newerWithinNow: 0.3,
  },
  supersedeAbove: 1,
};

test('memory quality: five-part keys give one table per set, four-part keys the conversations set', () => {
  const modern: Record<string, unknown> = { chosen };
  for (const set of ['conversations', 'chats'])
    for (const mode of ['hybrid', 'vector', 'keyword', 'cosine'])
      modern[`${set}/sqlite/user/${mode}/heldout`] = report(set === 'chats' ? 0.25 : 0.5);
  modern['chats/postgres/user/hybrid/heldout'] = report(0.75);
  assert.deepEqual(setsOf(modern), ['conversations', 'chats']);
  const text = memoryQualityTable([fake(modern)]);
  assert.match(text, /Set `conversations`:[\s\S]*\| sqlite\/user \/ heldout \| 0\.5 \|/);
  assert.match(text, /Set `chats`:[\s\S]*\| postgres\/user \/ heldout \| 0\.75 \|/);
  assert.match(text, /\| sqlite\/user \/ plain cosine \/ heldout \| 0\.25 \|/);

  const old = { chosen, 'sqlite/all/hybrid/tuning': report(0.4), 'sqlite/all/keyword/heldout': report(0) };
  const oldText = memoryQualityTable([fake(old)]);
  assert.deepEqual(setsOf(old), ['conversations']);
  assert.doesNotMatch(oldText, /Set `/);
  // Held-out rows come before the tuning half's.
  assert.ok(oldText.indexOf('keyword-only / heldout') < oldText.indexOf('sqlite/all / tuning'));
  assert.match(oldText, /write-time supersession off\./);
});

test('tools agents call: a row with no CPU figure says so, and both names of the writer figures are read', () => {
  const row = {
    era: 'legacy',
    tool: 'skills_get',
    rps: 0,
    p50Ms: 0,
    p99Ms: 0,
    bareRps: 10,
    ratio: 0,
    cpuUsPerRequest: null,
    bareCpuUsPerRequest: 20,
    answerBytes: 7,
  };
  const run = { mode: 'quick', loadAverageBefore: [18.9], loadAverageAfter: [14.8] };
  const calls = toolCallsTable([fake({ run, toolCalls: [row] })]);
  assert.match(calls, /\| skills_get 2025-11-25 \| 0 \(0\/0\) \| 10 \(7 bytes\) \| 0× \| n\/a \/ 20 \|/);
  assert.match(calls, /A quick run; load average \(1 min\) 18\.9 before, 14\.8 after\./);
  const writers = outputWritersTable([
    fake({
      run,
      outputWriters: [
        { tool: 'old', outputBytes: 1, nativeSameUs: 2, twiceSameUs: 3, nativeFreshUs: 4, twiceFreshUs: 5 },
        { tool: 'new', outputBytes: 1, nativeSameUs: 2, writerSameUs: 6, nativeFreshUs: 4, writerFreshUs: 7 },
      ],
    }),
  ]);
  assert.match(writers, /\| old \| 1 \| 2 \/ 3 \| 4 \/ 5 \|/);
  assert.match(writers, /\| new \| 1 \| 2 \/ 6 \| 4 \/ 7 \|/);
});
