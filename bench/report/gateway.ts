/** Tables from the full run's file (bench/results/latest*.json) and from consume.json. */

import type { PublishRow } from '../event.ts';
import { oneDecimal, table, times } from './markdown.ts';
import { memoryHeadlineRows } from './memory.ts';
import type { ResultFile } from './source.ts';

interface EraRow {
  method: 'tools/list' | 'tools/call';
  era: 'legacy' | 'modern';
  rps: number;
  p50Ms: number;
  p99Ms: number;
  bareRps: number;
  ratio: number;
}
interface Consume {
  warmP50Ms: number;
  warmP99Ms: number;
  ephemeralP50Ms: number;
  ephemeralP99Ms: number;
  firstPollMs: number;
  firstPollCount: number;
  commitFloorP50Ms: number;
  commitFloorP99Ms?: number;
}
interface FullRun {
  toolsList: {
    rps: number;
    p99Ms: number;
    nodeEngineRps: number;
    uwsHelloRps: number;
    sdkStatelessRps: number;
    sdkStatelessP99Ms: number;
  };
  reject401: { rps: number };
  eras?: EraRow[];
  publish: { byConcurrency: PublishRow[] };
  consume: Consume;
  rss: {
    gatewayIdleMb: number;
    workerIdleMb: number;
    groups: number;
    workerAfter1000GroupsMb: number;
    liveConsumersAfterGroups: number;
    liveConsumersAfterIdle: number;
    workerAfterIdleMb: number;
  };
}

const ERA_NAMES = { legacy: '2025-11-25', modern: '2026-07-28' } as const;
/** Issue 25's targets: ratios to bare uWS and to a kafkajs send. */
const ERA_TARGETS = { 'tools/list': '0.8×', 'tools/call': '0.5×' } as const;
const PUBLISH_TARGETS: Record<number, string> = { 1: '0.7×', 64: '2×' };

const publishRow = (row: PublishRow, target?: string) => [
  `event_publish c${row.concurrency} rps`,
  `${row.rps} (${row.p50Ms}/${row.p99Ms})`,
  `kafkajs send ${row.kafkajsRps} (${row.kafkajsP50Ms}/${row.kafkajsP99Ms})`,
  times(row.rps / row.kafkajsRps),
  ...(target === undefined ? [] : [target]),
];

/** Issue 25's speed targets: both eras, publish at c1 and c64, and the memory headline rows. */
export function targetsTable([full, memory]: ResultFile[]): string {
  const run = full!.data as unknown as FullRun;
  const rows = [
    ...(run.eras ?? []).map((e) => [
      `${e.method} rps ${ERA_NAMES[e.era]}`,
      `${e.rps} (${e.p50Ms}/${e.p99Ms})`,
      `bare uWS, same bytes ${e.bareRps}`,
      times(e.ratio),
      ERA_TARGETS[e.method],
    ]),
    ...run.publish.byConcurrency
      .filter((p) => PUBLISH_TARGETS[p.concurrency])
      .map((p) => publishRow(p, PUBLISH_TARGETS[p.concurrency])),
    ...memoryHeadlineRows(memory!, { writes: ['local'], keys: [1], rps: false }).map((r) => [
      r[0]!,
      r[1]!,
      r[2]!,
      '',
      r[3]!,
    ]),
  ];
  return table(
    ['measurement (uWS engine)', 'ours (p50/p99 ms)', 'baseline (same run)', 'ratio', 'target'],
    rows,
  );
}

/** The full run's own table, in the rows it printed when it ran (2026-11-22 had no eras rows). */
export function fullRunTable([full]: ResultFile[]): string {
  const run = full!.data as unknown as FullRun;
  const { toolsList: list, consume, rss } = run;
  const rows = [
    [
      'tools/list rps (uWS engine)',
      `${list.rps}`,
      `bare uWS ${list.uwsHelloRps}`,
      times(list.rps / list.uwsHelloRps),
    ],
    [
      'tools/list rps (uWS engine)',
      `${list.rps}`,
      `SDK stateless ${list.sdkStatelessRps}`,
      times(list.rps / list.sdkStatelessRps),
    ],
    [
      'tools/list rps (node:http engine)',
      `${list.nodeEngineRps}`,
      `uWS engine ${list.rps}`,
      times(list.nodeEngineRps / list.rps),
    ],
    ['tools/list p99 ms', `${list.p99Ms}`, `SDK stateless ${list.sdkStatelessP99Ms}`, ''],
    [
      '401 rejections rps',
      `${run.reject401.rps}`,
      `bare uWS ${list.uwsHelloRps}`,
      times(run.reject401.rps / list.uwsHelloRps),
    ],
    ...run.publish.byConcurrency.map((p) => {
      const [, ours, baseline, ratio] = publishRow(p);
      return [`event_publish c${p.concurrency} rps (p50/p99 ms)`, ours!, baseline!, ratio!];
    }),
    [
      'event_consume warm p50 / p99 ms',
      `${consume.warmP50Ms} / ${consume.warmP99Ms}`,
      `per-call consumer ${consume.ephemeralP50Ms} / ${consume.ephemeralP99Ms}`,
      `${times(consume.ephemeralP50Ms / consume.warmP50Ms)} faster`,
    ],
    [
      'bare kafkajs commitOffsets p50 ms (floor under any committing poll)',
      `${consume.commitFloorP50Ms}`,
      '',
      '',
    ],
    [
      'first poll of a new group ms (delay 3000)',
      `${consume.firstPollMs} (${consume.firstPollCount} msgs)`,
      '',
      '',
    ],
    ['RSS idle MB: gateway / worker', `${rss.gatewayIdleMb} / ${rss.workerIdleMb}`, '', ''],
    [
      `worker RSS MB after ${rss.groups} groups`,
      `${rss.workerAfter1000GroupsMb}`,
      `live consumers ${rss.liveConsumersAfterGroups}`,
      '',
    ],
    ['after idle (15000 ms)', `${rss.workerAfterIdleMb}`, `live consumers ${rss.liveConsumersAfterIdle}`, ''],
  ];
  return table(['measurement', 'ours', 'baseline (same run)', 'ratio'], rows);
}

/** `npm run bench -- consume`: one run's warm polls beside the bare commit they used to wait on. */
export function consumeTable([file]: ResultFile[]): string {
  const data = file!.data as {
    run: { loadAverageBefore: number[]; loadAverageAfter: number[] };
    consume: Consume;
  };
  const c = data.consume;
  return table(
    [
      'load average (1 min, before / after)',
      'warm poll p50 / p99 ms',
      'bare `commitOffsets` p50 / p99 ms',
      'p50 ÷ commit floor',
      'per-call consumer p50 ms',
    ],
    [
      [
        `${oneDecimal(data.run.loadAverageBefore[0]!)} / ${oneDecimal(data.run.loadAverageAfter[0]!)}`,
        `${c.warmP50Ms} / ${c.warmP99Ms}`,
        `${c.commitFloorP50Ms} / ${c.commitFloorP99Ms}`,
        `${(c.warmP50Ms / c.commitFloorP50Ms).toFixed(2)}×`,
        `${Math.round(c.ephemeralP50Ms)}`,
      ],
    ],
  );
}

interface Provenance {
  unsignedC64Rps: number;
  unsignedP99Ms: number;
  hmac: { signUs: number; verifyUs: number; c64Rps: number; p99Ms: number };
  ed25519: { signUs: number; verifyUs: number; c64Rps: number; p99Ms: number };
  hmacSignShareOfC64: number;
  ed25519SignShareOfC64: number;
  hmacVerifyShareOfWarmPoll: number;
  ed25519VerifyShareOfWarmPoll: number;
}

/** The signing rows of a full run, as bench/run.ts prints them. */
export function provenanceTable([full]: ResultFile[]): string {
  const run = full!.data as unknown as FullRun & { provenance: Provenance };
  const p = run.provenance;
  const percent = (fraction: number) => `${(fraction * 100).toFixed(1)}%`;
  const signing = (name: string, cost: Provenance['hmac']) => [
    `event_publish c64 rps signing with ${name} (p99 ms)`,
    `${cost.c64Rps} (${cost.p99Ms})`,
    `no signing key ${p.unsignedC64Rps} (${p.unsignedP99Ms})`,
    times(cost.c64Rps / p.unsignedC64Rps),
  ];
  return table(
    ['measurement', 'ours', 'baseline (same run)', 'ratio'],
    [
      signing('HMAC', p.hmac),
      signing('Ed25519', p.ed25519),
      [
        'stamp + sign µs per publish: HMAC / Ed25519',
        `${p.hmac.signUs} / ${p.ed25519.signUs}`,
        `c64 call time ${Math.round(1e6 / p.unsignedC64Rps)} µs`,
        `${percent(p.hmacSignShareOfC64)} / ${percent(p.ed25519SignShareOfC64)}`,
      ],
      [
        'verify µs per consumed message: HMAC / Ed25519',
        `${p.hmac.verifyUs} / ${p.ed25519.verifyUs}`,
        `warm 10-message poll ${run.consume.warmP50Ms} ms`,
        `${percent(p.hmacVerifyShareOfWarmPoll)} / ${percent(p.ed25519VerifyShareOfWarmPoll)}`,
      ],
    ],
  );
}
