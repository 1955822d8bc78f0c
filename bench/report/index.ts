/**
 * `npm run bench -- report [--check]`: writes every table of docs/performance.md from the
 * result files under bench/results/. A table sits between `<!-- table:NAME -->` and
 * `<!-- /table:NAME -->`; everything outside the markers is hand-written prose and is never
 * touched. `--check` writes nothing and fails when a table differs (the test does the same),
 * so a figure can no longer be copied by hand and drift from its file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadResult, type ResultFile, sourceLine } from './source.ts';
import { TABLES, type TableSpec } from './tables.ts';

export const performanceDoc = join(import.meta.dirname, '..', '..', 'docs', 'performance.md');

const MARKED = /<!-- table:([a-zA-Z0-9.-]+) -->\n[\s\S]*?<!-- \/table:\1 -->/g;
const OPENING = /<!-- table:([a-zA-Z0-9.-]+) -->/g;

/** What goes between one table's markers: where the figures come from, then the table. */
export function renderBlock(spec: TableSpec, load: (name: string) => ResultFile = loadResult): string {
  const files = spec.sources.map((name) => load(name));
  const sources = files.map((file) => sourceLine(file, spec.command)).join('\n\n');
  return `<!-- table:${spec.name} -->\n${sources}\n\n${spec.render(files)}\n<!-- /table:${spec.name} -->`;
}

export interface Rendered {
  text: string;
  /** Markers with no generator, generators with no marker, markers opened but never closed. */
  problems: string[];
}

export function renderDoc(
  doc: string,
  tables: TableSpec[] = TABLES,
  load: (name: string) => ResultFile = loadResult,
): Rendered {
  const problems: string[] = [];
  const byName = new Map(tables.map((spec) => [spec.name, spec]));
  const seen = new Set<string>();
  const text = doc.replace(MARKED, (whole, name: string) => {
    const spec = byName.get(name);
    if (!spec) {
      problems.push(`table:${name} has no generator in bench/report/tables.ts`);
      return whole;
    }
    if (seen.has(name)) problems.push(`table:${name} appears twice`);
    seen.add(name);
    return renderBlock(spec, load);
  });
  for (const [, name] of doc.matchAll(OPENING)) {
    if (!seen.has(name!) && byName.has(name!)) problems.push(`table:${name} is opened but never closed`);
  }
  for (const spec of tables) {
    if (!doc.includes(`<!-- table:${spec.name} -->`))
      problems.push(`table:${spec.name} has no marker in the doc`);
  }
  return { text, problems };
}

/** The names of the tables whose text in `doc` differs from what the generator writes. */
export function staleTables(doc: string, rendered: string): string[] {
  const blocks = (text: string) => new Map([...text.matchAll(MARKED)].map((m) => [m[1]!, m[0]]));
  const now = blocks(rendered);
  return [...blocks(doc)].filter(([name, block]) => now.get(name) !== block).map(([name]) => name);
}

export function runReport(check: boolean, log: (line: string) => void): number {
  const doc = readFileSync(performanceDoc, 'utf8');
  const { text, problems } = renderDoc(doc);
  for (const problem of problems) log(`report: ${problem}`);
  if (problems.length > 0) return 1;
  const stale = staleTables(doc, text);
  if (check) {
    for (const name of stale) log(`report: table:${name} differs from its result files`);
    return stale.length > 0 ? 1 : 0;
  }
  if (stale.length > 0) writeFileSync(performanceDoc, text);
  log(`report: ${TABLES.length} tables, ${stale.length} rewritten in docs/performance.md`);
  return 0;
}
