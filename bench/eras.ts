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

/** One request measured on the gateway and on a bare uWS server answering the gateway's bytes. */
export interface PairedSpec {
  method: EraMethod;
  era: Era;
  /** The gateway's MCP endpoint for the tool's namespace, and the key it admits. */
  url: string;
  key: string;
  tool?: string;
  args?: Record<string, unknown>;
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
      cases.push({
        spec,
        answer,
        ours: (seconds: number) => run(gatewayPid, url, { ...headers, 'x-api-key': key }, body, seconds),
        bare: (seconds: number) => run(bare.info.pid, bareUrl, headers, body, seconds),
        oursRuns: [] as MeasuredRun[],
        bareRuns: [] as MeasuredRun[],
      });
    }
    for (const c of cases) {
      await c.ours(1); // warm-up
      await c.bare(1);
    }
    for (let round = 1; round <= rounds; round++) {
      for (const c of cases) {
        const what = `${c.spec.method}${c.spec.tool ? ` ${c.spec.tool}` : ''} ${c.spec.era}`;
        log(`paired: round ${round}/${rounds}: ${what} on the gateway (uWS) and on bare uWS`);
        if (round % 2 === 1) {
          c.oursRuns.push(await c.ours(durationSeconds));
          c.bareRuns.push(await c.bare(durationSeconds));
        } else {
          c.bareRuns.push(await c.bare(durationSeconds));
          c.oursRuns.push(await c.ours(durationSeconds));
        }
      }
    }
    return cases.map((c) => {
      const ours = medianRun(c.oursRuns);
      return {
        method: c.spec.method,
        era: c.spec.era,
        ...(c.spec.tool ? { tool: c.spec.tool } : {}),
        rps: ours.rps,
        p50Ms: ours.p50Ms,
        p99Ms: ours.p99Ms,
        bareRps: medianRun(c.bareRuns).rps,
        ratio: median(c.oursRuns.map((result, i) => result.rps / c.bareRuns[i]!.rps)),
        cpuUsPerRequest: median(c.oursRuns.map((result) => result.cpuUsPerRequest)),
        bareCpuUsPerRequest: median(c.bareRuns.map((result) => result.cpuUsPerRequest)),
        answerBytes: c.answer.length,
      };
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

// `npx tsx bench/eras.ts [--quick]` runs this section alone (no Kafka needed) and prints its rows.
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const quick = process.argv.includes('--quick');
  const rows = await benchEras(quick ? 2 : 3, quick ? 1 : 5, (line) => console.error(`[bench] ${line}`));
  for (const row of eraRows(rows)) console.log(`| ${row.join(' | ')} |`);
}
