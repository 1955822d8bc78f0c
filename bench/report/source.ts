/**
 * A result file under bench/results/ and the line that says where its figures came from:
 * the run's date, the machine, the commit and the command. Files written before the bench
 * recorded its commit (bench/machine.ts) say "commit not recorded" rather than guess one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { utc } from './markdown.ts';

export const resultsDir = join(import.meta.dirname, '..', 'results');

interface Machine {
  cores?: number;
  cpu?: string;
  memoryGb?: number;
  node?: string;
  sqlite?: string;
  loadAverage1m?: number;
  engine?: string;
  commit?: string;
  command?: string;
}

export interface ResultFile {
  name: string;
  // Result files differ in shape per section; each table reads its own fields.
  data: Record<string, unknown>;
}

export function loadResult(name: string, dir = resultsDir): ResultFile {
  return { name, data: JSON.parse(readFileSync(join(dir, name), 'utf8')) as Record<string, unknown> };
}

function runOf(file: ResultFile): { date: string; machine: Machine } {
  const run = (file.data.run ?? {}) as { date?: string; machine?: Machine };
  // ops.json and footprint.json keep `measuredAt` and `machine` at the top level.
  const date = run.date ?? (file.data.measuredAt as string | undefined);
  const machine = run.machine ?? (file.data.machine as Machine | undefined);
  if (!date || !machine) throw new Error(`bench/results/${file.name} records no date or no machine`);
  return { date, machine };
}

function describeMachine(m: Machine): string {
  const parts = [`${m.cores} cores ${m.cpu}, ${m.memoryGb} GiB, Node ${m.node}`];
  if (m.sqlite) parts.push(`SQLite ${m.sqlite}`);
  if (m.loadAverage1m !== undefined) parts.push(`load average ${m.loadAverage1m} at the end`);
  return parts.join(', ');
}

/** `fallbackCommand` names what produced a file that does not record its own command. */
export function sourceLine(file: ResultFile, fallbackCommand: string): string {
  const { date, machine } = runOf(file);
  const commit = machine.commit ? `commit ${machine.commit}` : 'commit not recorded';
  const command = machine.command ?? fallbackCommand;
  return `Source: \`bench/results/${file.name}\`, run ${utc(date)}; ${describeMachine(machine)}; ${commit}; \`${command}\`.`;
}
