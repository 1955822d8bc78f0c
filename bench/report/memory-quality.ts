/**
 * Tables from `npm run bench -- memory-quality` (bench/results/memory-quality*.json). Reports
 * are keyed `<set>/<store>/<variant>/<mode>/<half>` (sets `conversations` and `chats`; modes
 * hybrid, vector, keyword, cosine); files written before the second set keyed them
 * `<store>/<variant>/<mode>/<half>` with one set and two modes. Both are read, the newer
 * first: a table is one set's, and the older files are the `conversations` set.
 */
import { table } from './markdown.ts';
import type { ResultFile } from './source.ts';

interface Report {
  hitAt1: number;
  hitAt5: number;
  mrr: number;
  newestFirst: number | null;
  abstention: { precision: number; recall: number; falseAlarm: number };
  falseEmpty: number;
  claimsNothingStored: number;
  p50Ms: number;
  p99Ms: number;
}
interface Chosen {
  settings: {
    fusion: string;
    vectorWeight: number;
    weakBelow: number;
    hideBelow: number;
    newerWithin: number;
    newerWithinNow: number;
    changedWithin?: number;
    changedWithinNow?: number;
  };
  supersedeAbove: number;
}
interface Key {
  set: string;
  store: string;
  variant: string;
  mode: string;
  half: string;
}

const MODE_NAMES: Record<string, string> = {
  vector: 'vector-only',
  keyword: 'keyword-only',
  cosine: 'plain cosine',
};

/** Every report in a file by its parts; a 4-part key belongs to the only set of its day. */
export function reportsOf(data: Record<string, unknown>): Map<string, Report> {
  const reports = new Map<string, Report>();
  for (const [name, value] of Object.entries(data)) {
    const parts = name.split('/');
    if (parts.length === 5) reports.set(name, value as Report);
    else if (parts.length === 4) reports.set(`conversations/${name}`, value as Report);
  }
  return reports;
}

const keyOf = (k: Key) => `${k.set}/${k.store}/${k.variant}/${k.mode}/${k.half}`;

/** The sets a file holds, in the order it wrote them. */
export function setsOf(data: Record<string, unknown>): string[] {
  return [...new Set([...reportsOf(data).keys()].map((key) => key.split('/')[0]!))];
}

/**
 * Which reports a table shows, in order: the held-out half of the default (hybrid) on both
 * stores, then the held-out half of each other mode the file measured on SQLite (stores rank
 * alike, so one store says enough), then the tuning half of the default.
 */
function rowKeys(reports: Map<string, Report>, set: string): Key[] {
  const keys: Key[] = [];
  const add = (store: string, mode: string, half: string) => {
    for (const variant of ['user', 'all']) {
      const key = { set, store, variant, mode, half };
      if (reports.has(keyOf(key))) keys.push(key);
    }
  };
  for (const store of ['sqlite', 'postgres']) add(store, 'hybrid', 'heldout');
  for (const mode of ['vector', 'keyword', 'cosine']) add('sqlite', mode, 'heldout');
  add('sqlite', 'hybrid', 'tuning');
  return keys;
}

const label = (k: Key) =>
  `${k.store}/${k.variant} / ${k.mode === 'hybrid' ? '' : `${MODE_NAMES[k.mode] ?? k.mode} / `}${k.half}`;

/** The ranking constants chosen on the tuning half, as a sentence. */
export function chosenLine(chosen: Chosen): string {
  const s = chosen.settings;
  const supersession = chosen.supersedeAbove >= 1 ? 'off' : `above cosine ${chosen.supersedeAbove}`;
  return (
    `Chosen on the tuning half: ${s.fusion} fusion, vector share ${s.vectorWeight}, newer within ` +
    `${s.newerWithin} (${s.newerWithinNow} for questions about the present), ` +
    (s.changedWithin === undefined
      ? ''
      : `a memory that says something changed within ${s.changedWithin} (${s.changedWithinNow} for questions about the present), `) +
    `weak under ${s.weakBelow}, ` +
    `hidden under ${s.hideBelow}, write-time supersession ${supersession}.`
  );
}

export function qualitySetTable(data: Record<string, unknown>, set: string): string {
  const reports = reportsOf(data);
  const rows = rowKeys(reports, set).map((key) => {
    const r = reports.get(keyOf(key))!;
    const a = r.abstention;
    return [
      label(key),
      `${r.hitAt1}`,
      `${r.hitAt5}`,
      `${r.mrr}`,
      r.newestFirst === null ? '-' : `${r.newestFirst}`,
      `${a.precision} / ${a.recall} / ${a.falseAlarm}`,
      `${r.falseEmpty}`,
      `${r.claimsNothingStored}`,
      `${r.p50Ms} / ${r.p99Ms}`,
    ];
  });
  return table(
    [
      'store / variant / half',
      'hit@1',
      'hit@5',
      'MRR',
      'newest first',
      'abstain P / R / false alarm',
      'answerable, nothing shown',
      'claims nothing stored',
      'p50 / p99 ms',
    ],
    rows,
  );
}

/** One file: the chosen constants, then a table per set (a set name above each when there are several). */
export function memoryQualityTable([file]: ResultFile[]): string {
  const data = file!.data;
  const sets = setsOf(data);
  const parts = [chosenLine(data.chosen as Chosen)];
  for (const set of sets) {
    if (sets.length > 1) parts.push(`Set \`${set}\`:`);
    parts.push(qualitySetTable(data, set));
  }
  return parts.join('\n\n');
}
