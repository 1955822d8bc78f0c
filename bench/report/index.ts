/**
 * `npm run bench -- report [--check]`: writes every table of the performance pages
 * (docs/performance.md and the pages split from it, docs/performance-*.md) from the result
 * files under bench/results/. A table sits between `<!-- table:NAME -->` and
 * `<!-- /table:NAME -->`; everything outside the markers is hand-written prose and is never
 * touched. `--check` writes nothing and fails when a table differs (the test does the same),
 * so a figure can no longer be copied by hand and drift from its file.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadResult, type ResultFile, sourceLine } from './source.ts';
import { TABLES, type TableSpec } from './tables.ts';

const docsDir = join(import.meta.dirname, '..', '..', 'docs');

/** docs/performance.md and the pages split from it, in name order. */
export function performanceDocs(): string[] {
  return readdirSync(docsDir)
    .filter((name) => /^performance(-[a-z-]+)?\.md$/.test(name))
    .sort()
    .map((name) => join(docsDir, name));
}

const MARKED = /<!-- table:([a-zA-Z0-9.-]+) -->\n[\s\S]*?<!-- \/table:\1 -->/g;
const OPENING = /<!-- table:([a-zA-Z0-9.-]+) -->/g;

/** What goes between one table's markers: where the figures come from, then the table. */
export function renderBlock(spec: TableSpec, load: (name: string) => ResultFile = loadResult): string {
  const files = spec.sources.map((name) => load(name));
  const sources = files.map((file) => sourceLine(file, spec.command)).join('\n\n');
  return `<!-- table:${spec.name} -->\n${sources}\n\n${spec.render(files)}\n<!-- /table:${spec.name} -->`;
}

/**
 * Every page with its tables rewritten. Problems are counted over the pages together, since
 * a table belongs on exactly one: markers with no generator, a table on two pages or twice on
 * one, generators with no marker anywhere, markers opened but never closed.
 */
export function renderDocs(
  docs: string[],
  tables: TableSpec[] = TABLES,
  load: (name: string) => ResultFile = loadResult,
): { texts: string[]; problems: string[] } {
  const problems: string[] = [];
  const byName = new Map(tables.map((spec) => [spec.name, spec]));
  const seen = new Set<string>();
  const texts = docs.map((doc) => {
    const here = new Set<string>();
    const text = doc.replace(MARKED, (whole, name: string) => {
      const spec = byName.get(name);
      if (!spec) {
        problems.push(`table:${name} has no generator in bench/report/tables.ts`);
        return whole;
      }
      if (seen.has(name)) problems.push(`table:${name} appears twice`);
      seen.add(name);
      here.add(name);
      return renderBlock(spec, load);
    });
    for (const [, name] of doc.matchAll(OPENING)) {
      if (!here.has(name!) && byName.has(name!)) problems.push(`table:${name} is opened but never closed`);
    }
    return text;
  });
  for (const spec of tables) {
    if (!seen.has(spec.name)) problems.push(`table:${spec.name} has no marker in the doc`);
  }
  return { texts, problems };
}

/** One page on its own (the tests' small inputs). */
export function renderDoc(
  doc: string,
  tables: TableSpec[] = TABLES,
  load: (name: string) => ResultFile = loadResult,
): { text: string; problems: string[] } {
  const { texts, problems } = renderDocs([doc], tables, load);
  return { text: texts[0]!, problems };
}

/** The names of the tables whose text in `doc` differs from what the generator writes. */
export function staleTables(doc: string, rendered: string): string[] {
  const blocks = (text: string) => new Map([...text.matchAll(MARKED)].map((m) => [m[1]!, m[0]]));
  const now = blocks(rendered);
  return [...blocks(doc)].filter(([name, block]) => now.get(name) !== block).map(([name]) => name);
}

export function runReport(check: boolean, log: (line: string) => void): number {
  const paths = performanceDocs();
  const docs = paths.map((path) => readFileSync(path, 'utf8'));
  const { texts, problems } = renderDocs(docs);
  for (const problem of problems) log(`report: ${problem}`);
  if (problems.length > 0) return 1;
  let differing = 0;
  for (const [i, path] of paths.entries()) {
    const stale = staleTables(docs[i]!, texts[i]!);
    differing += stale.length;
    if (check) for (const name of stale) log(`report: table:${name} differs from its result files`);
    else if (stale.length > 0) writeFileSync(path, texts[i]!);
  }
  if (check) return differing > 0 ? 1 : 0;
  log(`report: ${TABLES.length} tables on ${paths.length} pages, ${differing} rewritten`);
  return 0;
}
