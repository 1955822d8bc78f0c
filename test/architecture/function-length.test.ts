/**
 * No function in the two processes runs over MAX_LINES lines: a longer one is doing several
 * things, and the reader has to hold them all at once. Every function, method, accessor,
 * constructor and arrow under gateway/, broker-worker/ and shared/ is measured from the line
 * its body opens to the line it closes, read with the TypeScript compiler's own parser.
 *
 * ALLOWED names the few that are known to be over and are waiting for their owners; an entry
 * that is no longer over fails the test too, so the list only ever shrinks.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const root = join(import.meta.dirname, '../..');
const ROOTS = ['gateway', 'broker-worker', 'shared'];
const MAX_LINES = 80;

/** `file:function` of functions over the limit, each waiting to be split. */
const ALLOWED = new Set<string>([]);

function sourceFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sourceFiles(path));
    else if (/\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

function nameText(name: ts.Node | undefined, file: ts.SourceFile): string | undefined {
  if (!name) return undefined;
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name)) return name.text;
  return name.getText(file);
}

/** The name a reader would look for: the declaration's own, or the variable, property or call it is given to. */
function functionName(node: ts.FunctionLikeDeclaration, file: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const own = nameText(node.name, file);
  if (own) return own;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return nameText(parent.name, file) ?? '<anonymous>';
  if (ts.isCallExpression(parent)) return `${parent.expression.getText(file)}(…)`;
  return '<anonymous>';
}

interface Long {
  id: string;
  lines: number;
  at: string;
}

function longFunctions(path: string, text = readFileSync(join(root, path), 'utf8')): Long[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: Long[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const body = node.body as ts.Node;
      const first = file.getLineAndCharacterOfPosition(body.getStart(file)).line;
      const last = file.getLineAndCharacterOfPosition(body.getEnd()).line;
      const lines = last - first + 1;
      if (lines > MAX_LINES) {
        const name = functionName(node as ts.FunctionLikeDeclaration, file);
        found.push({ id: `${path}:${name}`, lines, at: `${path}:${first + 1}` });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

const long = ROOTS.flatMap((dir) => sourceFiles(dir)).flatMap((path) => longFunctions(path));

test(`no source function is over ${MAX_LINES} lines`, () => {
  const over = long.filter((entry) => !ALLOWED.has(entry.id));
  assert.deepEqual(
    over.map((entry) => `${entry.id} (${entry.lines} lines, ${entry.at})`),
    [],
    'split these into functions that each do one thing',
  );
});

test('every allowed long function is still long (the list only shrinks)', () => {
  const ids = new Set(long.map((entry) => entry.id));
  assert.deepEqual(
    [...ALLOWED].filter((id) => !ids.has(id)),
    [],
    'no longer over the limit: remove from ALLOWED',
  );
});

test('the measure finds a long function when there is one, and passes one at the limit', () => {
  const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
  // The braces take two lines, so MAX_LINES - 2 statements is a body of exactly MAX_LINES.
  const source = `const atLimit = () => {\n${body(MAX_LINES - 2)}\n};\nfunction over() {\n${body(MAX_LINES - 1)}\n}`;
  assert.deepEqual(longFunctions('probe.ts', source), [
    { id: 'probe.ts:over', lines: MAX_LINES + 1, at: `probe.ts:${MAX_LINES + 1}` },
  ]);
});
