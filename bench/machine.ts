/** What every bench section records about where it ran. */
import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

/**
 * The code a figure was measured on, read once when the bench starts: the sections write
 * result files as they go, so a later read would see the bench's own output as a change.
 * `-dirty` marks uncommitted changes outside bench/results/, which a short hash alone hides.
 */
function commitAtStart(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
    const head = git('rev-parse', '--short', 'HEAD');
    const changed = git('status', '--porcelain', '--untracked-files=no', '--', '.', ':!bench/results');
    return changed ? `${head}-dirty` : head;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

const commit = commitAtStart();
/** `npm run bench -- memory --quick` as typed, so a result file says how to produce it again. */
const args = process.argv.slice(2);
const command = process.argv[1]?.endsWith('run.ts')
  ? `npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`
  : `npx tsx ${process.argv[1] ? process.argv[1].replace(`${root}/`, '') : 'bench'}${args.length ? ` ${args.join(' ')}` : ''}`;

/**
 * Figures only mean something beside the machine and the code they came from. Every section
 * writes this object into its result file, so it also carries the commit and the command:
 * the generated tables of the performance pages (docs/performance*.md) print both.
 */
export function machineInfo(): {
  cores: number;
  cpu: string;
  memoryGb: number;
  node: string;
  commit: string;
  command: string;
} {
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    commit,
    command,
  };
}
