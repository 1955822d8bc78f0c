/**
 * The whole bench's report: bench/results/{quick,latest}.json and the printed table, built
 * from whichever phases finished. A run that fails part-way still writes what it measured,
 * with `failed` naming the phase, so an hour of figures is not lost to the last phase.
 */
import type { EraRow } from './eras.ts';
import { eraRows } from './eras.ts';
import type { ConsumeResults, PublishRow } from './event.ts';
import type { ScaleResults } from './event-scale.ts';
import { type FrontendResults, frontendRows } from './frontend.ts';
import type { OpsResults } from './ops.ts';
import { type ProvenanceResults, shareOfC64 } from './provenance.ts';

export interface Measured {
  front: FrontendResults;
  eras: EraRow[];
  /** tools/call on the tools agents call most, both eras, beside bare uWS (tool-calls.ts). */
  toolCalls: EraRow[];
  ops: OpsResults;
  publish: PublishRow[];
  provenance: ProvenanceResults;
  consume: ConsumeResults;
  scale: ScaleResults;
}

/** Wraps a phase's error so the run's last words say which phase it was. */
export class BenchPhaseError extends Error {
  constructor(
    readonly phase: string,
    cause: unknown,
  ) {
    super(`bench phase "${phase}" failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'BenchPhaseError';
  }
}

export async function inPhase<T>(phase: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw error instanceof BenchPhaseError ? error : new BenchPhaseError(phase, error);
  }
}

type Row = [string, string, string, string];
const ratio = (ours: number, theirs: number) => Math.round((ours / theirs) * 100) / 100;
const share = (part: number, whole: number) => Math.round((part / whole) * 10_000) / 10_000;
const percent = (fraction: number) => `${(fraction * 100).toFixed(1)}%`;

export function resultsOf(
  m: Partial<Measured>,
  run: { mode: string; date: string; seconds: number; machine: Record<string, unknown> },
  failed?: { phase: string; message: string },
) {
  const c64 = m.publish?.find((row) => row.concurrency === 64);
  const { provenance, consume, scale } = m;
  return {
    run: { ...run, machine: { ...run.machine, ...(m.front ? { engine: m.front.engineBuild } : {}) } },
    ...(failed ? { failed } : {}),
    ...(m.front ? { toolsList: m.front.toolsList, reject401: m.front.reject401 } : {}),
    ...(m.eras ? { eras: m.eras } : {}),
    ...(m.toolCalls ? { toolCalls: m.toolCalls } : {}),
    ...(m.ops ? { ops: m.ops } : {}),
    ...(m.publish
      ? {
          publish: {
            ...(c64
              ? {
                  c64: {
                    rps: c64.rps,
                    kafkajsRps: c64.kafkajsRps,
                    p50Ms: c64.p50Ms,
                    p99Ms: c64.p99Ms,
                    kafkajsP99Ms: c64.kafkajsP99Ms,
                  },
                }
              : {}),
            byConcurrency: m.publish,
          },
        }
      : {}),
    ...(consume ? { consume } : {}),
    ...(provenance
      ? {
          provenance: {
            ...provenance,
            hmacSignShareOfC64: shareOfC64(provenance.hmac.signUs, provenance.unsignedC64Rps),
            ed25519SignShareOfC64: shareOfC64(provenance.ed25519.signUs, provenance.unsignedC64Rps),
            // Shares of a warm poll need the consume phase, which runs after this one.
            ...(consume
              ? {
                  hmacVerifyShareOfWarmPoll: share(provenance.hmac.verifyUs * 10, consume.warmP50Ms * 1000),
                  ed25519VerifyShareOfWarmPoll: share(
                    provenance.ed25519.verifyUs * 10,
                    consume.warmP50Ms * 1000,
                  ),
                }
              : {}),
          },
        }
      : {}),
    ...(scale
      ? {
          rss: {
            gatewayIdleMb: scale.gatewayIdleMb,
            workerIdleMb: scale.workerIdleMb,
            groups: scale.groups,
            workerAfter1000GroupsMb: scale.workerAfterGroupsMb,
            liveConsumersAfterGroups: scale.liveConsumersAfterGroups,
            liveConsumersAfterIdle: scale.liveConsumersAfterIdle,
            workerAfterIdleMb: scale.workerAfterIdleMb,
          },
        }
      : {}),
  };
}

function eventRows(m: Partial<Measured>): Row[] {
  const { provenance, consume } = m;
  const rows: Row[] = (m.publish ?? []).map(
    (row): Row => [
      `event_publish c${row.concurrency} rps (p50/p99 ms)`,
      `${row.rps} (${row.p50Ms}/${row.p99Ms})`,
      `kafkajs send ${row.kafkajsRps} (${row.kafkajsP50Ms}/${row.kafkajsP99Ms})`,
      `${ratio(row.rps, row.kafkajsRps)}×`,
    ],
  );
  if (provenance) {
    for (const [name, cost] of [
      ['HMAC', provenance.hmac],
      ['Ed25519', provenance.ed25519],
    ] as const) {
      rows.push([
        `event_publish c64 rps signing with ${name} (p99 ms)`,
        `${cost.c64Rps} (${cost.p99Ms})`,
        `no signing key ${provenance.unsignedC64Rps} (${provenance.unsignedP99Ms})`,
        `${ratio(cost.c64Rps, provenance.unsignedC64Rps)}×`,
      ]);
    }
    const signShare = (us: number) => percent(shareOfC64(us, provenance.unsignedC64Rps));
    rows.push([
      'stamp + sign µs per publish: HMAC / Ed25519',
      `${provenance.hmac.signUs} / ${provenance.ed25519.signUs}`,
      `c64 call time ${Math.round(1e6 / provenance.unsignedC64Rps)} µs`,
      `${signShare(provenance.hmac.signUs)} / ${signShare(provenance.ed25519.signUs)}`,
    ]);
  }
  if (provenance && consume) {
    const verifyShare = (us: number) => percent(share(us * 10, consume.warmP50Ms * 1000));
    rows.push([
      'verify µs per consumed message: HMAC / Ed25519',
      `${provenance.hmac.verifyUs} / ${provenance.ed25519.verifyUs}`,
      `warm 10-message poll ${consume.warmP50Ms} ms`,
      `${verifyShare(provenance.hmac.verifyUs)} / ${verifyShare(provenance.ed25519.verifyUs)}`,
    ]);
  }
  if (consume) {
    rows.push(
      [
        'event_consume warm p50 / p99 ms',
        `${consume.warmP50Ms} / ${consume.warmP99Ms}`,
        `per-call consumer ${consume.ephemeralP50Ms} / ${consume.ephemeralP99Ms}`,
        `${ratio(consume.ephemeralP50Ms, consume.warmP50Ms)}× faster`,
      ],
      [
        'event_consume warm p50 / p99 ms beside the bare commit (commit now follows the answer)',
        `${consume.warmP50Ms} / ${consume.warmP99Ms}`,
        `kafkajs commitOffsets ${consume.commitFloorP50Ms} / ${consume.commitFloorP99Ms}`,
        `${ratio(consume.warmP50Ms, consume.commitFloorP50Ms)}×`,
      ],
      [
        'first poll of a new group ms (delay 3000)',
        `${consume.firstPollMs} (${consume.firstPollCount} msgs)`,
        '',
        '',
      ],
    );
  }
  return rows;
}

function scaleRows(scale: ScaleResults | undefined, idleMs: number): Row[] {
  if (!scale) return [];
  return [
    ['RSS idle MB: gateway / worker', `${scale.gatewayIdleMb} / ${scale.workerIdleMb}`, '', ''],
    [
      `worker RSS MB after ${scale.groups} groups`,
      `${scale.workerAfterGroupsMb}`,
      `live consumers ${scale.liveConsumersAfterGroups}`,
      '',
    ],
    [
      `after idle (${idleMs} ms)`,
      `${scale.workerAfterIdleMb}`,
      `live consumers ${scale.liveConsumersAfterIdle}`,
      '',
    ],
  ];
}

/** The printed table: one row per figure measured, beside its same-run baseline. */
export function tableOf(m: Partial<Measured>, idleMs: number): string {
  const rows: Row[] = [
    ...(m.front ? frontendRows(m.front) : []),
    ...(m.eras ? eraRows(m.eras) : []),
    ...(m.toolCalls ? eraRows(m.toolCalls) : []),
    ...eventRows(m),
    ...scaleRows(m.scale, idleMs),
  ];
  if (rows.length === 0) return '(nothing measured)';
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((row) => row[i]!.length), 8));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [
    line(['measurement', 'ours', 'baseline (same run)', 'ratio']),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
  ].join('\n');
}
