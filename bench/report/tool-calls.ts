/** Tables from `npm run bench -- tools` (bench/results/tool-calls*.json). */
import type { FloorFigures } from '../eras.ts';
import { table, times } from './markdown.ts';
import type { ResultFile } from './source.ts';

interface Row {
  era: 'legacy' | 'modern';
  tool?: string;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  bareRps: number;
  ratio: number;
  cpuUsPerRequest: number | null;
  bareCpuUsPerRequest: number | null;
  answerBytes: number;
  /** The same call on the floor server (the tool's work alone); files from 2026-11-29 10:30 on. */
  floor?: FloorFigures;
}
interface Writer {
  tool: string;
  outputBytes: number;
  nativeSameUs: number;
  nativeFreshUs: number;
  /** The tool's own writer; files of 2026-11-29 04:55 and before name it for the one-walk writer. */
  writerSameUs?: number;
  writerFreshUs?: number;
  twiceSameUs?: number;
  twiceFreshUs?: number;
}
interface ToolCalls {
  run: { mode: string; loadAverageBefore: number[]; loadAverageAfter: number[] };
  toolCalls: Row[];
  outputWriters?: Writer[];
}

const ERA = { legacy: '2025-11-25', modern: '2026-07-28' } as const;
/** A run too slow to finish one call in its window records no CPU per call (JSON has no Infinity). */
const cpu = (us: number | null) => (us === null ? 'n/a' : `${us}`);

/** Each tool in each era beside bare uWS: rps, the median per-round ratio, CPU per call. */
export function toolCallsTable([file]: ResultFile[]): string {
  const data = file!.data as unknown as ToolCalls;
  const [before, after] = [data.run.loadAverageBefore[0], data.run.loadAverageAfter[0]];
  const rows = data.toolCalls.flatMap((r) => {
    const row = [
      `${r.tool} ${ERA[r.era]}`,
      `${r.rps} (${r.p50Ms}/${r.p99Ms})`,
      `${r.bareRps} (${r.answerBytes} bytes)`,
      times(r.ratio),
      `${cpu(r.cpuUsPerRequest)} / ${cpu(r.bareCpuUsPerRequest)}`,
    ];
    if (!r.floor) return [row];
    const floor = [
      `${r.tool} ${ERA[r.era]}, floor server (the tool's work alone)`,
      `${r.floor.rps}`,
      `${r.bareRps}`,
      times(r.floor.ratio),
      `${r.floor.cpuUsPerRequest} / ${cpu(r.bareCpuUsPerRequest)}`,
    ];
    return [row, floor];
  });
  return [
    `A ${data.run.mode} run; load average (1 min) ${before} before, ${after} after.`,
    table(
      [
        'tools/call (uWS engine)',
        'rps (p50/p99 ms)',
        'bare uWS, same bytes: rps',
        'ratio (median of rounds)',
        'server CPU µs per call: ours / bare',
      ],
      rows,
    ),
  ].join('\n\n');
}

/** JSON.stringify twice against a tool output's writer, the output repeated and varied. */
export function outputWritersTable([file]: ResultFile[]): string {
  const data = file!.data as unknown as ToolCalls;
  return table(
    [
      'output of',
      'JSON bytes',
      'same output each call: stringify twice / writer µs',
      'varied output: stringify twice / writer µs',
    ],
    (data.outputWriters ?? []).map((w) => [
      w.tool,
      `${w.outputBytes}`,
      `${w.nativeSameUs} / ${w.writerSameUs ?? w.twiceSameUs}`,
      `${w.nativeFreshUs} / ${w.writerFreshUs ?? w.twiceFreshUs}`,
    ]),
  );
}
