/**
 * docs/configuration.md documents every setting the code reads. The names are collected
 * from the sources of both processes and their tools (gateway/, broker-worker/, shared/,
 * bin/, scripts/, dev/) in five ways, because settings are read in five ways there:
 *
 *   1. `process.env.NAME`, `env.NAME`, `env?.NAME`;
 *   2. `env['NAME']`, `env?.["NAME"]`;
 *   3. a helper called with the environment and a literal name: `integer(env, 'NAME', …)`,
 *      `value(env, 'NAME')`;
 *   4. the keys of a zod object (`z.object({ NAME: … })`): tool input schemas use lower-case
 *      fields, so an upper-case key there is an environment schema (gateway/config.ts,
 *      the memory settings, the event signing keys);
 *   5. string lists read by name (`SOURCES.find((name) => env[name])`): in a file that reads
 *      `env[someVariable]`, every upper-case string in an array literal.
 *
 * A name counts as documented when it appears in backticks in the first cell of a table row
 * of docs/configuration.md. The scan is checked against settings known to be read each way,
 * so a change in how settings are read cannot make it pass by finding nothing.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';

const root = join(import.meta.dirname, '../..');
const SCANNED = ['gateway', 'broker-worker', 'shared', 'bin', 'scripts', 'dev'];
const SOURCE = /\.(ts|mts|cts|mjs|cjs|js)$/;

/**
 * Upper-case strings the scan finds that are not setting names. Each is an accepted value of
 * a setting, found by way 5 in an array of allowed values next to an `env[name]` read
 * (shared/broker-settings.ts).
 */
const NOT_SETTINGS = new Map<string, string>([
  ['SASL_SSL', 'a value of BROKER_SECURITY_PROTOCOL'],
  ['SASL_PLAINTEXT', 'a value of BROKER_SECURITY_PROTOCOL'],
  ['SSL', 'a value of BROKER_SECURITY_PROTOCOL'],
  ['PLAINTEXT', 'a value of BROKER_SECURITY_PROTOCOL'],
  ['PLAIN', 'a value of BROKER_SASL_MECHANISM'],
]);

function sources(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sources(path));
    else if (SOURCE.test(entry.name)) found.push(path);
  }
  return found;
}

const NAME = '[A-Z][A-Z0-9_]*';
const DIRECT = new RegExp(`\\benv\\??\\.(${NAME})\\b`, 'g');
const INDEXED = new RegExp(`\\benv\\??\\.?\\[\\s*(['"\`])(${NAME})\\1\\s*\\]`, 'g');
const HELPER = new RegExp(`\\(\\s*env\\s*,\\s*(['"\`])(${NAME})\\1`, 'g');
const DYNAMIC_READ = /\benv\??\.?\[\s*[A-Za-z_$][\w$]*\s*\]/;
const STRING_ARRAY = /\[((?:\s*(['"])[^'"\n]*\2\s*,?)+)\s*\]/g;
const QUOTED = new RegExp(`(['"])(${NAME})\\1`, 'g');

/** Keys at the top level of every `z.object({ … })` in the text. */
function zodObjectKeys(text: string): string[] {
  const keys: string[] = [];
  for (const match of text.matchAll(/z\s*\.\s*object\s*\(\s*\{/g)) {
    let depth = 1;
    let i = (match.index ?? 0) + match[0].length;
    const start = i;
    while (i < text.length && depth > 0) {
      if (text[i] === '{' || text[i] === '(' || text[i] === '[') depth++;
      else if (text[i] === '}' || text[i] === ')' || text[i] === ']') depth--;
      i++;
    }
    const body = text.slice(start, i - 1);
    // Only keys at depth 0 of the body: blank out nested brackets first.
    let flat = '';
    let level = 0;
    for (const ch of body) {
      if (ch === '{' || ch === '(' || ch === '[') level++;
      if (level === 0) flat += ch;
      if (ch === '}' || ch === ')' || ch === ']') level--;
    }
    for (const key of flat.matchAll(
      new RegExp(`(?:^|[,\\n{])\\s*(?:\\/\\*\\*[^]*?\\*\\/\\s*)?(${NAME})\\s*:`, 'g'),
    )) {
      if (key[1] !== undefined) keys.push(key[1]);
    }
  }
  return keys;
}

interface Found {
  name: string;
  way: number;
  file: string;
}

function collect(): Found[] {
  const found: Found[] = [];
  for (const dir of SCANNED) {
    for (const path of sources(join(root, dir))) {
      const file = relative(root, path);
      const text = readFileSync(path, 'utf8');
      for (const m of text.matchAll(DIRECT)) found.push({ name: m[1] as string, way: 1, file });
      for (const m of text.matchAll(INDEXED)) found.push({ name: m[2] as string, way: 2, file });
      for (const m of text.matchAll(HELPER)) found.push({ name: m[2] as string, way: 3, file });
      for (const name of zodObjectKeys(text)) found.push({ name, way: 4, file });
      if (DYNAMIC_READ.test(text)) {
        for (const array of text.matchAll(STRING_ARRAY)) {
          for (const m of (array[1] as string).matchAll(QUOTED))
            found.push({ name: m[2] as string, way: 5, file });
        }
      }
    }
  }
  return found.filter((f) => !NOT_SETTINGS.has(f.name));
}

/** Names in backticks in the first cell of the doc's table rows. */
function documented(doc: string): Set<string> {
  const names = new Set<string>();
  for (const line of doc.split('\n')) {
    if (!line.startsWith('|')) continue;
    const firstCell = line.split('|')[1] ?? '';
    for (const m of firstCell.matchAll(new RegExp(`\`(${NAME})\``, 'g'))) names.add(m[1] as string);
  }
  return names;
}

const found = collect();

test('the scan finds settings read each way', () => {
  const byWay = (way: number) => new Set(found.filter((f) => f.way === way).map((f) => f.name));
  for (const [way, name] of [
    [1, 'BROKER_WORKERS'],
    [1, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [1, 'LOCAL_KAFKA_USERS'],
    [3, 'BROKER_CONSUMER_IDLE_MS'],
    [3, 'BROKER_BOOTSTRAP_SERVERS'],
    [3, 'BROKER_SESSION_TIMEOUT_MS'],
    [4, 'PORT'],
    [4, 'MEMORY_EMBEDDINGS'],
    [4, 'EVENT_SIGNING_SECRET'],
    [5, 'GSC_CREDENTIALS_PATH'],
    [5, 'PRODUCTHUNT_DEVELOPER_TOKEN'],
  ] as const) {
    assert.ok(byWay(way).has(name), `way ${way} should find ${name}`);
  }
  assert.ok(new Set(found.map((f) => f.name)).size >= 100, 'about a hundred settings are read');
});

test('docs/configuration.md documents every setting the code reads', () => {
  const doc = readFileSync(join(root, 'docs/configuration.md'), 'utf8');
  const inDoc = documented(doc);
  const missing = new Map<string, string>();
  for (const f of found) {
    if (!inDoc.has(f.name) && !missing.has(f.name)) missing.set(f.name, f.file);
  }
  assert.deepEqual(
    [...missing].map(([name, file]) => `${name} (read in ${file})`),
    [],
    'settings missing from a table in docs/configuration.md',
  );
});

test('settings being added now are documented too', () => {
  const inDoc = documented(readFileSync(join(root, 'docs/configuration.md'), 'utf8'));
  assert.ok(inDoc.has('TRUST_PROXY'));
});
