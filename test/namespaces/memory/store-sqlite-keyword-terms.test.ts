/**
 * Which query terms the SQLite keyword arm matches on a large key: every term until their
 * document counts pass the postings budget, then the rarest ones that can fill the arm alone.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keywordTerms } from '../../../gateway/namespaces/memory/store/sqlite-search.ts';

const stems = ['oral', 'struck', 'three', 'batter', 'close', 'in'];
/** The terms as the arm matches them: each stem behind its key's tag. */
const tagged = (...names: string[]) => names.map((stem) => `kabc_${stem}`);
const terms = tagged(...stems);

test('every term is matched while their document counts stay within the budget', () => {
  const df = { oral: 99, struck: 30, three: 393, batter: 65, close: 565, in: 2_000 };
  assert.deepEqual(keywordTerms(terms, stems, df, 72), terms);
});

test('past the budget the most common terms are left out, the rest kept in query order', () => {
  const df = { oral: 99, struck: 30, three: 393, batter: 65, close: 565, in: 22_862 };
  assert.deepEqual(keywordTerms(terms, stems, df, 72), tagged('oral', 'struck', 'three', 'batter', 'close'));
  // Two common terms: both go once the rarer ones can fill the arm.
  const two = { oral: 99, struck: 30, three: 3_900, batter: 65, close: 565, in: 22_862 };
  assert.deepEqual(keywordTerms(terms, stems, two, 72), tagged('oral', 'struck', 'batter', 'close'));
});

test('common terms stay when the rarer ones cannot fill the arm on their own', () => {
  // No kept term occurs in 72 memories until `three`, so it is kept though over the budget.
  const df = { oral: 9, struck: 3, three: 5_000, batter: 6, close: 50, in: 22_862 };
  assert.deepEqual(keywordTerms(terms, stems, df, 72), tagged('oral', 'struck', 'three', 'batter', 'close'));
  // A single term is always matched, however common.
  assert.deepEqual(keywordTerms(['kabc_in'], ['in'], { in: 22_862 }, 72), ['kabc_in']);
});

test('stems the key does not hold cost nothing and are kept', () => {
  const df = { oral: 0, struck: 30, three: 393, batter: 65, close: 565, in: 22_862 };
  assert.deepEqual(keywordTerms(terms, stems, df, 72).includes('kabc_oral'), true);
});
