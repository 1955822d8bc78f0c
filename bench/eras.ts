/**
 * Protocol eras side by side: tools/list and tools/call (event_capabilities, whose worker
 * status the bench gateway answers in-process) on the uWS engine, each in the 2025 era and
 * in 2026-07-28, each beside a bare uWS server answering the very bytes the gateway
 * answered to that request (captured from the gateway in this run). The bare server parses
 * nothing and checks no key, so the ratio is what the gateway's own work costs.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild } from './child.ts';
import { type LoadResult, load } from './frontend.ts';

export type Era = 'legacy' | 'modern';
export type EraMethod = 'tools/list' | 'tools/call';

export interface EraRow {
  method: EraMethod;
  era: Era;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** The bare uWS server answering the same bytes. */
  bareRps: number;
  /** Median over the rounds of ours / bare, each pair measured back to back. */
  ratio: number;
  /**
   * CPU time the server process spent per request (median run), gateway and bare: unlike
   * rps, it does not depend on how much of the machine the load generator took.
   */
  cpuUsPerRequest: number;
  bareCpuUsPerRequest: number;
  /** Bytes of the answer body, the same for both. */
  answerBytes: number;
  /** The tool a tools/call row called, when it is not the eras rows' event_capabilities. */
  tool?: string;
  /** The same call on a server doing only the tool's work (see PairedSpec.floor). */
  floor?: FloorFigures;
}

const MODERN_VERSION = '2026-07-28';
const TOOL = 'event_capabilities';
const BASE_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The request each era's client sends: the 2025 era bare, 2026-07-28 with its _meta claim and routing headers. */
export function request(
  method: EraMethod,
  era: Era,
  tool = TOOL,
  args: Record<string, unknown> = {},
): { body: string; headers: Record<string, string> } {
  const params: Record<string, unknown> = method === 'tools/call' ? { name: tool, arguments: args } : {};
  const headers: Record<string, string> = { ...BASE_HEADERS };
  if (era === 'modern') {
    params._meta = {
      'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
    };
    headers['mcp-protocol-version'] = MODERN_VERSION;
    headers['mcp-method'] = method;
    if (method === 'tools/call') headers['mcp-name'] = tool;
  } else {
    headers['mcp-protocol-version'] = '2025-11-25';
  }
  const message =
    era === 'legacy' && method === 'tools/list'
      ? { jsonrpc: '2.0', id: 1, method }
      : { jsonrpc: '2.0', id: 1, method, params };
  return { body: JSON.stringify(message), headers };
}

/** One answer from the gateway, checked to be a success in the era asked for. */
export async function capture(
  url: string,
  key: string,
  method: EraMethod,
  era: Era,
  tool = TOOL,
  args: Record<string, unknown> = {},
): Promise<Buffer> {
  const { body, headers } = request(method, era, tool, args);
  const response = await fetch(url, { method: 'POST', headers: { ...headers, 'x-api-key': key }, body });
  const bytes = Buffer.from(await response.arrayBuffer());
  const parsed = JSON.parse(bytes.toString('utf8')) as {
    result?: { resultType?: string; isError?: boolean; tools?: unknown[] };
  };
  const modern = parsed.result?.resultType === 'complete';
  if (response.status !== 200 || !parsed.result || parsed.result.isError || modern !== (era === 'modern')) {
    throw new Error(
      `${era} ${method}: unexpected answer ${response.status} ${bytes.toString('utf8').slice(0, 300)}`,
    );
  }
  return bytes;
}

/** Linux clock ticks per second for /proc/<pid>/stat times (sysconf CLK_TCK, 100 on Linux). */
const CLOCK_TICKS = 100;

/** User plus system CPU seconds a process has used so far, from /proc (Linux). */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces); utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

export interface MeasuredRun extends LoadResult {
  cpuUsPerRequest: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The run at the median rps (the lower middle one for an even count), so its latencies go with it. */
function medianRun(runs: MeasuredRun[]): MeasuredRun {
  const sorted = [...runs].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** One server of a case: its load function and its runs, one per round. */
interface Side {
  name: string;
  load: (seconds: number) => Promise<MeasuredRun>;
  runs: MeasuredRun[];
}

/** One request measured on the gateway and on a bare uWS server answering the gateway's bytes. */
export interface PairedSpec {
  method: EraMethod;
  era: Era;
  /** The gateway's MCP endpoint for the tool's namespace, and the key it admits. */
  url: string;
  key: string;
  tool?: string;
  args?: Record<string, unknown>;
  /**
   * A third server doing the tool's own work without the gateway's (bench/servers/*-floor.ts),
   * started with these settings and the era's result `_meta` as FLOOR_META; its answer must
   * be the gateway's bytes.
   */
  floor?: { entry: string; env: Record<string, string> };
}

/** The floor server's figures beside a row's gateway and bare ones (see PairedSpec.floor). */
export interface FloorFigures {
  rps: number;
  /** Median over the rounds of floor / bare. */
  ratio: number;
  cpuUsPerRequest: number;
}

/** The `_meta` of a 2026-07-28 result as JSON, or '' for a 2025 answer. */
function resultMeta(answer: Buffer): string {
  const meta = (JSON.parse(answer.toString('utf8')) as { result?: { _meta?: unknown } }).result?._meta;
  return meta === undefined ? '' : JSON.stringify(meta);
}

/**
 * Each case is loaded on the gateway and on its bare server back to back, `rounds` times,
 * the order swapped every round. Reported: each side's median run and the median of the
 * per-round ratios, so on a shared machine a neighbour's burst costs one round, not the ratio.
 */
export async function pairedRounds(
  gatewayPid: number,
  specs: PairedSpec[],
  durationSeconds: number,
  rounds: number,
  log: (line: string) => void,
): Promise<EraRow[]> {
  const dir = await mkdtemp(join(tmpdir(), 'mcp-bench-eras-'));
  const bares: Array<Awaited<ReturnType<typeof startChild>>> = [];
  const run = async (
    pid: number,
    target: string,
    headers: Record<string, string>,
    body: string,
    seconds: number,
  ): Promise<MeasuredRun> => {
    const before = await cpuSeconds(pid);
    const result = await load(target, headers, seconds, 64, body);
    const cpuUsPerRequest = Math.round((((await cpuSeconds(pid)) - before) * 1e7) / result.requests) / 10;
    if (result.non2xx > 0 || result.errors > 0) {
      throw new Error(`${body.slice(0, 80)} on ${target}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    }
    return { ...result, cpuUsPerRequest };
  };
  try {
    const cases = [];
    for (const [index, spec] of specs.entries()) {
      const { method, era, url, key, tool, args } = spec;
      const answer = await capture(url, key, method, era, tool, args);
      const file = join(dir, `${index}.json`);
      await writeFile(file, answer);
      const bare = await startChild('bench/servers/uws-hello.ts', { BENCH_BODY_FILE: file });
      bares.push(bare);
      const { body, headers } = request(method, era, tool, args);
      const bareUrl = `http://127.0.0.1:${bare.info.port}${new URL(url).pathname}`;
      const sides: Side[] = [
        {
          name: 'gateway',
          load: (seconds) => run(gatewayPid, url, { ...headers, 'x-api-key': key }, body, seconds),
          runs: [],
        },
        { name: 'bare', load: (seconds) => run(bare.info.pid, bareUrl, headers, body, seconds), runs: [] },
      ];
      if (spec.floor) {
        const floor = await startChild(spec.floor.entry, {
          ...spec.floor.env,
          FLOOR_META: resultMeta(answer),
        });
        bares.push(floor);
        const floorUrl = `http://127.0.0.1:${floor.info.port}${new URL(url).pathname}`;
        const floorAnswer = await capture(floorUrl, key, method, era, tool, args);
        if (!floorAnswer.equals(answer)) {
          throw new Error(
            `${spec.floor.entry} answered other bytes than the gateway: ${floorAnswer.toString().slice(0, 300)}`,
          );
        }
        sides.push({
          name: 'floor',
          load: (seconds) => run(floor.info.pid, floorUrl, headers, body, seconds),
          runs: [],
        });
      }
      cases.push({ spec, answer, sides });
    }
    for (const c of cases) for (const side of c.sides) await side.load(1); // warm-up
    for (let round = 1; round <= rounds; round++) {
      for (const c of cases) {
        const what = `${c.spec.method}${c.spec.tool ? ` ${c.spec.tool}` : ''} ${c.spec.era}`;
        const names = c.sides.map((side) => side.name).join(', ');
        log(`paired: round ${round}/${rounds}: ${what} on ${names}`);
        // The order is reversed every other round, so no side always runs first.
        const order = round % 2 === 1 ? c.sides : [...c.sides].reverse();
        for (const side of order) side.runs.push(await side.load(durationSeconds));
      }
    }
    return cases.map((c) => {
      const [oursRuns, bareRuns, floorRuns] = c.sides.map((side) => side.runs) as [
        MeasuredRun[],
        MeasuredRun[],
        MeasuredRun[] | undefined,
      ];
      const ours = medianRun(oursRuns);
      const perRound = (runs: MeasuredRun[]) =>
        median(runs.map((result, i) => result.rps / bareRuns[i]!.rps));
      const cpu = (runs: MeasuredRun[]) => median(runs.map((result) => result.cpuUsPerRequest));
      const row: EraRow = {
        method: c.spec.method,
        era: c.spec.era,
        ...(c.spec.tool ? { tool: c.spec.tool } : {}),
        rps: ours.rps,
        p50Ms: ours.p50Ms,
        p99Ms: ours.p99Ms,
        bareRps: medianRun(bareRuns).rps,
        ratio: perRound(oursRuns),
        cpuUsPerRequest: cpu(oursRuns),
        bareCpuUsPerRequest: cpu(bareRuns),
        answerBytes: c.answer.length,
      };
      if (floorRuns)
        row.floor = {
          rps: medianRun(floorRuns).rps,
          ratio: perRound(floorRuns),
          cpuUsPerRequest: cpu(floorRuns),
        };
      return row;
    });
  } finally {
    await Promise.all(bares.map((bare) => bare.stop()));
    await rm(dir, { recursive: true, force: true });
  }
}

/** tools/list and tools/call on event_capabilities, both eras, beside bare uWS. */
export async function benchEras(
  durationSeconds: number,
  rounds: number,
  log: (line: string) => void,
): Promise<EraRow[]> {
  const gateway = await startChild('bench/servers/gateway.ts', { HTTP_ENGINE: 'uws' });
  try {
    const url = `http://127.0.0.1:${gateway.info.port}/event/mcp`;
    const key = String(gateway.info.key ?? '');
    const specs: PairedSpec[] = [];
    for (const method of ['tools/list', 'tools/call'] as const)
      for (const era of ['legacy', 'modern'] as const) specs.push({ method, era, url, key });
    return await pairedRounds(gateway.info.pid, specs, durationSeconds, rounds, log);
  } finally {
    await gateway.stop();
  }
}

const ratio = (ours: number, theirs: number) => Math.round((ours / theirs) * 100) / 100;
const ERA_NAME: Record<Era, string> = { legacy: '2025-11-25', modern: '2026-07-28' };

/**
 * Table rows (measurement, ours, baseline, ratio): each era beside bare uWS (median runs,
 * median per-round ratio), then 2026-07-28 beside 2025 (ratio of the median runs).
 */
export function eraRows(rows: EraRow[]): Array<[string, string, string, string]> {
  const table: Array<[string, string, string, string]> = [];
  // Named, so the capabilities row is not read as every tool's.
  const called = (row: EraRow) => (row.method === 'tools/call' ? ` ${row.tool ?? TOOL}` : '');
  const groups = [...new Set(rows.map((row) => `${row.method}${called(row)}`))];
  for (const group of groups) {
    const inGroup = rows.filter((row) => `${row.method}${called(row)}` === group);
    const legacy = inGroup.find((row) => row.era === 'legacy');
    const modern = inGroup.find((row) => row.era === 'modern');
    for (const row of [legacy, modern]) {
      if (!row) continue;
      table.push([
        `${group} rps ${ERA_NAME[row.era]} (uWS engine; p50/p99 ms)`,
        `${row.rps} (${row.p50Ms}/${row.p99Ms})`,
        `bare uWS, same ${row.answerBytes} bytes ${row.bareRps}`,
        `${Math.round(row.ratio * 100) / 100}×`,
      ]);
      if (row.floor) table.push(...floorRows(group, row, row.floor));
    }
    if (legacy && modern) {
      table.push([
        `${group} rps 2026-07-28 beside 2025-11-25`,
        `${modern.rps}`,
        `2025-11-25 ${legacy.rps}`,
        `${ratio(modern.rps, legacy.rps)}×`,
      ]);
      table.push([
        `${group} server CPU µs/request: 2026-07-28 / 2025-11-25`,
        `${modern.cpuUsPerRequest} / ${legacy.cpuUsPerRequest}`,
        `bare uWS ${modern.bareCpuUsPerRequest} / ${legacy.bareCpuUsPerRequest}`,
        `${ratio(modern.cpuUsPerRequest, legacy.cpuUsPerRequest)}×`,
      ]);
    }
  }
  return table;
}

/** A floor server's rows: its rps beside bare uWS, and the gateway's CPU per call beside its. */
function floorRows(group: string, row: EraRow, floor: FloorFigures): Array<[string, string, string, string]> {
  return [
    [
      `${group} rps ${ERA_NAME[row.era]}, the tool's work alone (floor server)`,
      `${floor.rps}`,
      `bare uWS ${row.bareRps}`,
      `${Math.round(floor.ratio * 100) / 100}×`,
    ],
    [
      `${group} server CPU µs/request ${ERA_NAME[row.era]}: gateway beside the floor server`,
      `${row.cpuUsPerRequest}`,
      `floor ${floor.cpuUsPerRequest}`,
      `${ratio(row.cpuUsPerRequest, floor.cpuUsPerRequest)}×`,
    ],
  ];
}

// `npx tsx bench/eras.ts [--quick]` runs this section alone (no Kafka needed) and prints its rows.
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const quick = process.argv.includes('--quick');
  const rows = await benchEras(quick ? 2 : 3, quick ? 1 : 5, (line) => console.error(`[bench] ${line}`));
  for (const row of eraRows(rows)) console.log(`| ${row.join(' | ')} |`);
}
