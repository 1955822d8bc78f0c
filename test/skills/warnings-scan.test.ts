/**
 * The body scans behind skills_get's safety warnings: they find exactly what the original
 * global regexes found (checked on thousands of generated bodies, with those regexes as the
 * reference), and they get through a SKILL.md built to make a regex rescan itself, at the
 * 1 MiB skills_get reads. With the regexes, the first of those bodies held the event loop for
 * minutes (measured: 39 s for 64 KiB of blank lines, growing with the square of the size).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_FILE_BYTES } from '../../gateway/namespaces/skills/content.ts';
import {
  dynamicCommands,
  pipesToShell,
  safetyWarnings,
  shellFences,
} from '../../gateway/namespaces/skills/warnings.ts';

const REFERENCE = {
  fences: /^\s*(```|~~~)\s*(bash|sh|shell|zsh|console|powershell|pwsh|ps1|cmd|bat|fish)\b/gim,
  pipes: /\b(curl|wget|iwr|invoke-webrequest)\b[^\n|]*\|\s*(sudo\s+)?(ba|z|da|fi)?sh\b|\|\s*iex\b/gi,
  dynamic: /!`[^`\n]+`/g,
};
const all = (body: string, pattern: RegExp) => [...body.matchAll(pattern)].map((match) => match[0]);

const TOKENS = [
  'curl',
  'CURL ',
  'wget',
  'iwr',
  'Invoke-WebRequest',
  ' ',
  '  ',
  '\t',
  '\n',
  '\r',
  '\u2028',
  '|',
  '| ',
  'sh',
  'bash',
  'zsh',
  'fish',
  'sudo ',
  'iex',
  'x',
  'a.sh',
  '-fsSL',
  'https://x.example/i.sh',
  '!',
  '`',
  '!`',
  '```',
  '~~~',
  'console',
  'pwsh',
  'shell',
  'bat',
];

/** mulberry32: the same bodies on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('the scans find exactly what the original regexes find', () => {
  const next = random(20260726);
  let withFindings = 0;
  for (let i = 0; i < 20_000; i++) {
    const length = 1 + Math.floor(next() * 24);
    const body = Array.from({ length }, () => TOKENS[Math.floor(next() * TOKENS.length)]).join('');
    const expected = [all(body, REFERENCE.fences), all(body, REFERENCE.pipes), all(body, REFERENCE.dynamic)];
    assert.deepEqual(
      [shellFences(body), pipesToShell(body), dynamicCommands(body)],
      expected,
      JSON.stringify(body),
    );
    if (expected.some((found) => found.length > 0)) withFindings++;
  }
  assert.ok(withFindings > 2_000, `the generated bodies exercise the patterns (${withFindings})`);
});

test('bodies built to make a regex rescan itself are read at the full 1 MiB', () => {
  const fill = (unit: string, tail: string) =>
    unit.repeat(Math.floor((MAX_FILE_BYTES - tail.length) / unit.length)) + tail;
  // A fence right after the run would end a regex's first attempt; text there makes it retry.
  const blankLines = fill(' \n', 'x\n```bash\n');
  assert.deepEqual(shellFences(blankLines), ['```bash']);
  const downloaders = fill('curl ', '| sh\n');
  assert.equal(pipesToShell(downloaders).length, 1);
  assert.ok(pipesToShell(downloaders)[0]?.startsWith('curl curl'));
  const noPipe = fill('wget ', 'x\n');
  assert.deepEqual(pipesToShell(noPipe), []);
  const pipes = fill('|\t', ' iex\n');
  assert.deepEqual(pipesToShell(pipes), ['|\t iex']);
  const openings = fill('!`', '\n');
  assert.deepEqual(
    dynamicCommands(openings).slice(0, 2),
    ['!`!`', '!`!`'],
    'each opening closes at the next backtick',
  );
  const codes = safetyWarnings(`${blankLines}${downloaders}`, [], []).map((warning) => warning.code);
  assert.deepEqual(codes, ['SHELL_SNIPPETS', 'PIPE_TO_SHELL']);
});
