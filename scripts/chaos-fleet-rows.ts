/**
 * The rows `npm run chaos -- fleet` prints, one per fault, and the table they make: the
 * same columns for every engine, with what a column cannot mean for a fault (a duplicate
 * memory write, a lost rate-limit decision) shown as "—" and the fault's own figures in
 * the note.
 */
import { cpus, loadavg, totalmem } from 'node:os';
import { runCli } from '../test/support/cli.ts';
import type { GroupReport } from '../test/support/group-under-faults.ts';
import type { Pairs } from '../test/support/pairs.ts';

export interface Row {
  fault: string;
  acknowledged: number;
  lost: number | null;
  duplicated: number | null;
  unanswered: number;
  longestPauseMs: number;
  recovered: boolean;
  note: string;
}

/** A key minted on the fleet's key store with `npm run keys -- create`. */
export async function mint(fleet: Pairs, label: string, ...options: string[]): Promise<string> {
  const made = await runCli('keys', ['create', '--label', label, '--json', ...options], {
    env: fleet.storeEnv,
  });
  if (made.code !== 0) throw new Error(`npm run keys -- create failed: ${made.stderr}`);
  return (JSON.parse(made.stdout) as { key: string }).key;
}

/** A row for a fault that was not run; its note says why. */
export function skipped(fault: string): Row {
  return {
    fault,
    acknowledged: 0,
    lost: null,
    duplicated: null,
    unanswered: 0,
    longestPauseMs: 0,
    recovered: false,
    note: '',
  };
}

export function groupRow(fault: string, report: GroupReport): Row {
  return {
    fault,
    acknowledged: report.acknowledged,
    lost: report.lost,
    duplicated: report.duplicated,
    unanswered: report.unanswered,
    longestPauseMs: report.longestPauseMs,
    // Every acknowledged message reached a consumer, with nobody stepping in.
    recovered: report.delivered === report.acknowledged,
    note: `floor ${report.floor} (open leases at the kill), ${report.uncommittedAtKills} uncommitted`,
  };
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export function printRows(rows: Row[]): void {
  const header = [
    'fault',
    'acknowledged',
    'lost',
    'duplicated',
    'unanswered',
    'longest pause',
    'recovered on its own',
    'note',
  ];
  const cells = rows.map((r) => [
    r.fault,
    String(r.acknowledged),
    r.lost === null ? '—' : String(r.lost),
    r.duplicated === null ? '—' : String(r.duplicated),
    String(r.unanswered),
    seconds(r.longestPauseMs),
    r.recovered ? 'yes' : 'NO',
    r.note,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => `| ${c.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const c of cells) console.log(line(c));
}

/** The date, the machine and how loaded it is, for the table's heading: pauses grow with load. */
export function machine(): string {
  const cores = cpus();
  const load = loadavg()
    .map((n) => n.toFixed(1))
    .join(' ');
  return (
    `${new Date().toISOString()}: ${cores.length} x ${cores[0]?.model ?? 'unknown CPU'}, ` +
    `${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.versions.node}, load average ${load}`
  );
}
