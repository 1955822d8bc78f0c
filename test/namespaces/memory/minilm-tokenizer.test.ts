/**
 * The WordPiece tokenizer of the minilm provider. A wrong id never fails loudly, it only
 * makes every vector a little worse, so the ids are checked against the real bert-base-
 * uncased vocabulary (from the set-up model) as well as against a tiny hand-made one.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  type TokenizerJson,
  WordPieceTokenizer,
} from '../../../gateway/namespaces/memory/embeddings/minilm/tokenizer.ts';
import { setUpMiniLm } from '../../support/minilm.ts';

function tinyTokenizer(vocab: string[], maxTokens?: number): WordPieceTokenizer {
  const json: TokenizerJson = {
    normalizer: { type: 'BertNormalizer', lowercase: true, strip_accents: null },
    model: {
      type: 'WordPiece',
      vocab: Object.fromEntries(
        ['[PAD]', '[UNK]', '[CLS]', '[SEP]', ...vocab].map((token, id) => [token, id]),
      ),
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
    },
  };
  return new WordPieceTokenizer(json, maxTokens);
}

const real = (async () => {
  const { files } = await setUpMiniLm();
  const json = JSON.parse(readFileSync(files.tokenizer, 'utf8')) as TokenizerJson;
  const id = (token: string) => {
    const found = json.model.vocab[token];
    assert.notEqual(found, undefined, `${token} is in the vocabulary`);
    return found!;
  };
  return { tokenizer: new WordPieceTokenizer(json), id };
})();

test('greedy longest match first, continuation pieces carry ##', () => {
  const tokenizer = tinyTokenizer(['un', 'una', '##aff', '##able', '##ffable', 'aff']);
  // "una" is longer than "un", so it wins even though "un ##aff ##able" would also cover the word.
  assert.deepEqual(tokenizer.encode('unaffable').ids, [2, 5, 8, 3]);
  // Inside a word only ## pieces match: "aff" then "##able", never the bare "un".
  assert.deepEqual(tokenizer.encode('affable').ids, [2, 9, 7, 3]);
});

test('a word with any piece missing is one [UNK], and so is a word over 100 characters', () => {
  const tokenizer = tinyTokenizer(['a', '##a', 'b']);
  assert.deepEqual(tokenizer.encode('ab b').ids, [2, 1, 6, 3]);
  assert.deepEqual(tokenizer.encode('a'.repeat(100)).ids, [2, 4, ...Array(99).fill(5), 3]);
  assert.deepEqual(tokenizer.encode('a'.repeat(101)).ids, [2, 1, 3]);
});

test('truncation keeps [CLS] and [SEP] inside the budget', () => {
  const tokenizer = tinyTokenizer(['a'], 8);
  const { ids } = tokenizer.encode('a '.repeat(50));
  assert.equal(ids.length, 8);
  assert.deepEqual(ids, [2, 4, 4, 4, 4, 4, 4, 3]);
  assert.deepEqual(tokenizer.encode('').ids, [2, 3]);
});

test('the normaliser: whitespace, controls, accents, case, CJK and punctuation', () => {
  const tokenizer = tinyTokenizer([]);
  assert.deepEqual([...tokenizer.words('Héllo,\tWORLD!\n')], ['hello', ',', 'world', '!']);
  // NUL, zero-width space (Cf) and a byte-order mark are dropped, not turned into spaces.
  assert.deepEqual([...tokenizer.words('he\u0000l\u200bl\ufeffo')], ['hello']);
  // No-break and ideographic spaces separate words.
  assert.deepEqual([...tokenizer.words('a\u00a0b\u3000c')], ['a', 'b', 'c']);
  // CJK ideographs stand alone; Hangul does not, and leaves accent stripping as jamo (NFD).
  assert.deepEqual([...tokenizer.words('中文abc한국어')], ['中', '文', 'abc한국어'.normalize('NFD')]);
  // Every ASCII symbol is punctuation to BERT, and so is Unicode's P class.
  assert.deepEqual(
    [...tokenizer.words('$5.00+x`y«z»')],
    ['$', '5', '.', '00', '+', 'x', '`', 'y', '«', 'z', '»'],
  );
  // Lower-cased one character at a time: Σ becomes σ even at the end of a word.
  assert.deepEqual([...tokenizer.words('ΟΔΟΣ')], ['οδοσ']);
  // A literal special token in stored text stays text.
  assert.deepEqual([...tokenizer.words('[SEP]')], ['[', 'sep', ']']);
});

test('bert-base-uncased ids: hello world', async () => {
  const { tokenizer } = await real;
  assert.deepEqual(tokenizer.encode('hello world').ids, [101, 7592, 2088, 102]);
  assert.deepEqual(tokenizer.encode('Héllo, WORLD!').ids, [101, 7592, 1010, 2088, 999, 102]);
});

test('bert-base-uncased ids: word pieces, accents, CJK, symbols and an unknown character', async () => {
  const { tokenizer, id } = await real;
  const ids = (...tokens: string[]) => [101, ...tokens.map(id), 102];
  assert.deepEqual(
    tokenizer.encode("John Johanson's house").ids,
    ids('john', 'johan', '##son', "'", 's', 'house'),
  );
  assert.deepEqual(tokenizer.encode('unaffable').ids, ids('una', '##ffa', '##ble'));
  assert.deepEqual(
    tokenizer.encode('naïve café Zürich Müller').ids,
    ids('naive', 'cafe', 'zurich', 'muller'),
  );
  assert.deepEqual(tokenizer.encode('中文').ids, ids('中', '文'));
  assert.deepEqual(tokenizer.encode('$5.00').ids, ids('$', '5', '.', '00'));
  assert.deepEqual(tokenizer.encode('ΟΔΟΣ').ids, ids('ο', '##δ', '##ο', '##σ'));
  // The llama is not in the vocabulary: alone or glued to a known word, the word is [UNK].
  assert.deepEqual(tokenizer.encode('🦙').ids, [101, 100, 102]);
  assert.deepEqual(tokenizer.encode('hello🦙 world').ids, [101, 100, 2088, 102]);
});

test('bert-base-uncased ids: long text is cut at 256 tokens, as sentence-transformers does', async () => {
  const { tokenizer } = await real;
  const { ids } = tokenizer.encode('hello world '.repeat(300));
  assert.equal(ids.length, 256);
  assert.equal(ids[0], 101);
  assert.equal(ids[255], 102);
  assert.deepEqual(ids.slice(1, 5), [7592, 2088, 7592, 2088]);
});
