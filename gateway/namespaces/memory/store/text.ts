import type * as Stemmer from 'stemmer';
import { lazyRequire } from '../../../../shared/lazy-require.ts';

const loadStemmer = lazyRequire<typeof Stemmer>('stemmer');

/**
 * How both stores see words. The SQLite keyword index is fed tokens made here (see
 * sqlite-fts.ts), and keyword relevance is computed here for both stores, so one tokenizer
 * decides what "the same word" means everywhere:
 * - words split and folded as FTS5's `unicode61 remove_diacritics 2` does (letters, digits
 *   and private-use characters; lower case; diacritics dropped);
 * - each word reduced by the Porter stemmer (`stemmer` gives FTS5 `porter`'s stems: the
 *   store tests compare them over WordNet's vocabulary).
 */
const WORD = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;
const MARKS = /\p{M}+/gu;
const ASCII = /^[ -~]*$/;

/** Words as FTS5 unicode61 (remove_diacritics 2) splits and folds them. */
export function foldedWords(text: string): string[] {
  const words: string[] = [];
  for (const match of text.matchAll(WORD)) {
    const lower = match[0].toLowerCase();
    // ASCII has no marks to drop; skipping the two normalisations halves the cost per word.
    const word = ASCII.test(lower) ? lower : lower.normalize('NFD').replace(MARKS, '').normalize('NFC');
    if (word.length > 0) words.push(word);
  }
  return words;
}

/**
 * Stems already made. Every write stems its text for the keyword index, ranking stems each
 * candidate's text the first time a search meets it (ranking.ts keeps the set by content
 * hash after that), and the Porter stemmer's regexes cost a few microseconds a word. Words
 * repeat heavily across memories, so a map answers nearly all of them; it is emptied when
 * full rather than kept in LRU order.
 */
const STEMS = new Map<string, string>();
const MAX_CACHED_STEMS = 100_000;

/** FTS5 porter leaves tokens under 3 or over 64 bytes alone. */
export function stem(word: string): string {
  const cached = STEMS.get(word);
  if (cached !== undefined) return cached;
  const bytes = Buffer.byteLength(word);
  const made = bytes < 3 || bytes > 64 ? word : loadStemmer().stemmer(word);
  if (STEMS.size >= MAX_CACHED_STEMS) STEMS.clear();
  STEMS.set(word, made);
  return made;
}

/** Every stem of a text, in order (what the keyword index holds). */
export function textStems(text: string): string[] {
  return foldedWords(text).map(stem);
}

/**
 * Words a query carries that say nothing about what is sought: English function words,
 * the question words and verbs agents ask with ("what did the user mention…"), and the
 * pieces contractions and possessives split into ("user's" → "user" + "s"). The index
 * keeps them (it holds the text as it is); only the query side drops them.
 */
const QUERY_STOPWORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has have ' +
    'having he her here hers herself him himself his how i if in into is it its itself just me more most ' +
    'my myself no nor not now of off on once only or other our ours ourselves out over own same she should ' +
    'so some such than that the their theirs them themselves then there these they this those through to ' +
    'too under until up very was we were what when where which while who whom whose why will with would you ' +
    'your yours yourself yourselves ' +
    // pieces of contractions and possessives
    's t d ll m re ve ' +
    // how agents phrase a question to their memory
    'user users assistant mention mentioned mentions say said says tell told remember recall know ' +
    'please ever currently'
  ).split(' '),
);

export interface QueryWords {
  /** Folded content words, unique, in query order (the Postgres arm parses these itself). */
  words: string[];
  /** Their stems, unique (the SQLite arm and keyword relevance use these). */
  stems: string[];
}

/**
 * The content words of a query for the keyword arm. When a query holds nothing but
 * function words ("The Who"), those are searched rather than nothing.
 */
export function queryWords(query: string): QueryWords {
  const all = [...new Set(foldedWords(query))];
  const content = all.filter((word) => !QUERY_STOPWORDS.has(word));
  const words = (content.length > 0 ? content : all).slice(0, 64);
  const stems: string[] = [];
  const kept: string[] = [];
  for (const word of words) {
    const s = stem(word);
    if (stems.includes(s)) continue;
    stems.push(s);
    kept.push(word);
  }
  return { words: kept, stems };
}
