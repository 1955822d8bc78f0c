/**
 * Every relative link in README.md and docs/**\/*.md must lead somewhere: the file (or folder)
 * it names must exist, and an anchor (`#part`) into a Markdown file must name one of its
 * headings, by the slugs GitHub gives them (or an explicit `<a id>`/`<a name>`). Links inside
 * fenced code blocks and code spans are not links; absolute URLs (`https:`, `mailto:`, `//…`)
 * are not checked.
 *
 * The checker is itself checked on small inputs (a missing file, a missing heading, GitHub's
 * slugs for headings with code, punctuation and repeats), and the scan must find the links
 * known to be there, so a change in how links are read cannot make it pass by finding nothing.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';

const root = join(import.meta.dirname, '../..');

interface Link {
  file: string;
  line: number;
  target: string;
}

function markdownFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...markdownFiles(path));
    else if (entry.name.endsWith('.md')) found.push(path);
  }
  return found.sort();
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** The lines of a Markdown text with fenced code blocks blanked out (line numbers kept). */
function proseLines(text: string): string[] {
  const lines = text.split(/\r?\n/);
  let fence: string | undefined;
  return lines.map((line) => {
    const open = FENCE.exec(line);
    const marker = open?.[1] ?? '';
    if (fence === undefined) {
      if (marker === '') return line;
      fence = marker;
      return '';
    }
    if (marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) {
      fence = undefined;
    }
    return '';
  });
}

/** A line with its code spans blanked out, so `[a](b)` written as code is not a link. */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, (span) => ' '.repeat(span.length));
}

const INLINE =
  /!?\[(?:[^\][]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g;
const REFERENCE = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/;

/** Every link target written in a Markdown text, with its line number. */
function linksIn(file: string, text: string): Link[] {
  const links: Link[] = [];
  proseLines(text).forEach((raw, index) => {
    const line = withoutCodeSpans(raw);
    for (const match of line.matchAll(INLINE)) links.push({ file, line: index + 1, target: match[1] ?? '' });
    const reference = REFERENCE.exec(line);
    if (reference?.[1]) links.push({ file, line: index + 1, target: reference[1] });
  });
  return links.map((link) => ({ ...link, target: link.target.replace(/^<|>$/g, '') }));
}

/** GitHub's slug for a heading's text: rendered text, lower case, punctuation dropped. */
function slug(heading: string): string {
  const text = heading
    .replace(/`+([^`]*?)`+/g, (_, code: string) => code.replaceAll('_', '\uE000'))
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/\*+/g, '')
    .replace(/(^|\W)_+|_+(?=\W|$)/gu, '$1')
    .replaceAll('\uE000', '_');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a Markdown text offers: its headings' slugs (repeats get -1, -2…) and HTML ids. */
function anchorsIn(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const add = (heading: string) => {
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  };
  const lines = proseLines(text);
  lines.forEach((line, index) => {
    const atx = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
    const previous = index > 0 ? (lines[index - 1] ?? '') : '';
    if (atx) add(atx[1] ?? '');
    else if (/^ {0,3}(=+|-+)[ \t]*$/.test(line) && isParagraphLine(previous)) add(previous.trim());
    for (const match of line.matchAll(/<a\s[^>]*\b(?:id|name)\s*=\s*["']([^"']+)["']/gi))
      anchors.add(match[1] ?? '');
  });
  return anchors;
}

function isParagraphLine(line: string): boolean {
  const trimmed = line.trim();
  return trimmed !== '' && !/^(#|[-*+>|]|\d+[.)]\s)/.test(trimmed);
}

const anchorCache = new Map<string, Set<string>>();

function anchorsOf(path: string): Set<string> {
  let anchors = anchorCache.get(path);
  if (!anchors) {
    anchors = anchorsIn(readFileSync(path, 'utf8'));
    anchorCache.set(path, anchors);
  }
  return anchors;
}

/** Why a link does not resolve, or undefined when it does (or is not a relative link). */
function problemWith(link: Link, base: string = root): string | undefined {
  const { target } = link;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return undefined;
  const hashAt = target.indexOf('#');
  const pathPart = (hashAt === -1 ? target : target.slice(0, hashAt)).replace(/\?.*$/, '');
  const anchor = hashAt === -1 ? undefined : target.slice(hashAt + 1);
  let path: string;
  try {
    path = pathPart === '' ? link.file : resolve(dirname(link.file), decodeURIComponent(pathPart));
  } catch {
    return `cannot decode ${JSON.stringify(pathPart)}`;
  }
  if (path !== base && !path.startsWith(base + sep)) return 'leads outside the repository';
  if (!existsSync(path)) return `${relative(base, path)} does not exist`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(path).isDirectory() || !path.endsWith('.md')) return undefined;
  const wanted = decodeURIComponent(anchor).toLowerCase();
  if (!anchorsOf(path).has(wanted)) return `${relative(base, path)} has no heading #${anchor}`;
  return undefined;
}

function documents(): string[] {
  return [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))];
}

test('GitHub slugs: code, punctuation, emphasis, links and repeats', () => {
  assert.equal(slug('HTTP and MCP'), 'http-and-mcp');
  assert.equal(slug('Rate limits, tracing and fairness'), 'rate-limits-tracing-and-fairness');
  assert.equal(slug('`memory_write` tail (issue 25, fourth pass)'), 'memory_write-tail-issue-25-fourth-pass');
  assert.equal(slug('The event namespace (`/event/mcp`)'), 'the-event-namespace-eventmcp');
  assert.equal(slug('Re-run of 2026-11-26, 15:00–15:10 UTC'), 're-run-of-2026-11-26-15001510-utc');
  assert.equal(slug('**Bold** and _emphasis_ and [a link](x.md)'), 'bold-and-emphasis-and-a-link');
  assert.equal(slug('snake_case stays'), 'snake_case-stays');
  assert.deepEqual(
    [
      ...anchorsIn(
        '# Top\n\n## Part\n\n```\n# not a heading\n```\n\n## Part\n\nText\n---\n<a id="here"></a>\n',
      ),
    ],
    ['top', 'part', 'part-1', 'text', 'here'],
  );
});

test('the checker finds missing files and missing headings, and skips code and URLs', () => {
  const file = join(root, 'docs', 'example.md');
  const text = [
    'See [ok](../README.md), [gone](missing.md), [bad anchor](decisions/README.md#no-such-part).',
    'A [good anchor](decisions/README.md#memory) and [web](https://example.com/x.md).',
    '`[code](nowhere.md)` is code.',
    '```',
    '[fenced](nowhere.md)',
    '```',
    '[ref]: ../docs/nowhere.md',
  ].join('\n');
  const links = linksIn(file, text);
  assert.deepEqual(
    links.map((link) => link.target),
    [
      '../README.md',
      'missing.md',
      'decisions/README.md#no-such-part',
      'decisions/README.md#memory',
      'https://example.com/x.md',
      '../docs/nowhere.md',
    ],
  );
  assert.deepEqual(
    links.map((link) => problemWith(link)),
    [
      undefined,
      'docs/missing.md does not exist',
      'docs/decisions/README.md has no heading #no-such-part',
      undefined,
      undefined,
      'docs/nowhere.md does not exist',
    ],
  );
});

test('every relative link in README.md and docs/ resolves, anchors included', () => {
  const links = documents().flatMap((file) => linksIn(file, readFileSync(file, 'utf8')));
  // The scan must see the links known to be there: the decisions index links every record.
  const index = join(root, 'docs', 'decisions', 'README.md');
  const records = readdirSync(dirname(index)).filter((name) => /^\d{4}-.*\.md$/.test(name));
  const fromIndex = new Set(links.filter((link) => link.file === index).map((link) => link.target));
  assert.ok(records.length > 100, `found only ${records.length} decision records`);
  for (const record of records)
    assert.ok(fromIndex.has(record), `docs/decisions/README.md does not list ${record}`);
  assert.ok(
    links.some((link) => link.target.includes('#')),
    'no anchored link found',
  );

  const broken = links.flatMap((link) => {
    const problem = problemWith(link);
    return problem ? [`${relative(root, link.file)}:${link.line}: (${link.target}) ${problem}`] : [];
  });
  assert.deepEqual(broken, [], `broken links:\n${broken.join('\n')}`);
});
