/**
 * What the import and export tests share: keys made by `npm run keys`, JSONL files, and the
 * `npm run memory` command run as an operator runs it (the compiled launcher, its own process).
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type CliResult, runCli } from '../../support/cli.ts';
import type { StateStoreEnv } from '../../support/state-stores.ts';

/** A state store's settings (state-stores.ts) plus the memory settings a test gives. */
export type Env = StateStoreEnv;

/** A fresh API key in the state store `env` names; returns its id. */
export async function newKey(env: Env): Promise<string> {
  const created = await runCli('keys', ['create', '--label', 'transfer', '--json'], { env });
  assert.equal(created.code, 0, created.stderr);
  return (JSON.parse(created.stdout) as { id: string }).id;
}

export async function writeLines(file: string, lines: (object | string)[]): Promise<void> {
  const text = lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n');
  await writeFile(file, `${text}\n`);
}

export function memoryCli(args: string[], env: Env): Promise<CliResult> {
  return runCli('memory', args, { env });
}

/** The key's memories as export writes them. */
export async function exported(env: Env, key: string, dir: string): Promise<string> {
  const out = join(dir, `${key}-${Date.now()}.jsonl`);
  const result = await memoryCli(['export', '--key', key, '--out', out], env);
  assert.equal(result.code, 0, result.stderr);
  return readFile(out, 'utf8');
}

export function contents(jsonl: string): string[] {
  return jsonl
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { content: string }).content);
}
