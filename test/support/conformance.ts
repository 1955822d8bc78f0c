/**
 * Runs the official MCP conformance suite's CLI (@modelcontextprotocol/conformance) in server
 * mode under the cached Node 22 (see node22.ts) and reads back what it checked.
 *
 * The CLI writes `<out>/server-<scenario>-<timestamp>/checks.json` per scenario it ran; a
 * run of one scenario or of many is read the same way.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Node22Install, node22Env } from './node22.ts';

export const CONFORMANCE = '@modelcontextprotocol/conformance';

export interface Check {
  id: string;
  name: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO' | string;
  description?: string;
  errorMessage?: string;
  details?: Record<string, unknown>;
}

export interface SuiteRun {
  command: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  /** Checks per scenario, for every scenario the CLI saved results for. */
  scenarios: Map<string, Check[]>;
}

/** `server-<scenario>-<ISO time with - for : and .>`, e.g. server-tools-list-2026-11-23T17-20-24-890Z */
const RESULT_DIR = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

/** Runs `conformance server <args>` with an output directory of its own; kills it after `timeoutMs`. */
export async function runConformanceServer(
  suite: Node22Install,
  args: string[],
  timeoutMs: number,
): Promise<SuiteRun> {
  const outDir = await mkdtemp(join(tmpdir(), 'mcp-conformance-'));
  try {
    const cli = join(suite.packageDir(CONFORMANCE), 'dist', 'index.js');
    const argv = [cli, 'server', ...args, '--output-dir', outDir];
    const command = [suite.node, ...argv].join(' ');
    const child = spawn(suite.node, argv, {
      cwd: outDir,
      env: node22Env({ NO_COLOR: '1' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => {
      output += `\n[test] killed after ${timeoutMs} ms\n`;
      child.kill('SIGKILL');
    }, timeoutMs);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (c, s) => resolve([c, s]));
    }).finally(() => clearTimeout(timer));

    const scenarios = new Map<string, Check[]>();
    for (const entry of await readdir(outDir)) {
      const scenario = RESULT_DIR.exec(entry)?.[1];
      if (!scenario) continue;
      const checks = JSON.parse(await readFile(join(outDir, entry, 'checks.json'), 'utf8')) as Check[];
      scenarios.set(scenario, checks);
    }
    return { command, code, signal, output, scenarios };
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

/** The suite colours its report whatever NO_COLOR says; assertion messages read better without. */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** The command, its output and the checks (of one scenario, or all), for assertion messages. */
export function explain(run: SuiteRun, scenario?: string): string {
  const checks = scenario === undefined ? Object.fromEntries(run.scenarios) : run.scenarios.get(scenario);
  return [
    `$ ${run.command}`,
    `exit: ${run.code ?? run.signal}`,
    '--- suite output ---',
    run.output.replace(ANSI, '').trimEnd(),
    `--- checks${scenario === undefined ? '' : ` of ${scenario}`} ---`,
    JSON.stringify(checks ?? null, null, 2),
  ].join('\n');
}
