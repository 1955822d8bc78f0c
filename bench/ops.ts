/**
 * `npm run bench -- ops`: what fleet operations cost a gateway, each variant against limits
 * and tracing off in the same run, in paired rounds (every variant once per round, medians
 * over rounds) so that drift of a shared machine falls on all of them alike:
 * - rate limits on (a budget never reached, so every request runs the limiter) in memory,
 *   and shared through a real Valkey, with the script calls Valkey answered per 1,000
 *   requests (leases: one call serves many);
 * - tracing configured but sampling nothing (SDK loaded), and sampling every request to a
 *   loopback OTLP receiver;
 * - fairness: one key's admitted rate alone, and while another key floods past its budget.
 */
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startValkey } from '../dev/valkey/valkey.ts';
import { parseRedisUrl, RespClient } from '../gateway/limits/resp-client.ts';
import { benchRoot, startChild } from './child.ts';
import { machineInfo } from './machine.ts';

const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const headersFor = (key: string) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'x-api-key': key,
});
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ratio = (ours: number, base: number) => Math.round((ours / base) * 1000) / 1000;

/** Answered-with-2xx requests per second over the run. */
async function admittedRps(url: string, key: string, seconds: number, connections: number): Promise<number> {
  const result = await autocannon({
    url,
    method: 'POST',
    headers: headersFor(key),
    body: TOOLS_LIST,
    connections,
    duration: seconds,
  });
  return Math.round(result['2xx'] / seconds);
}

export interface OpsResults {
  machine: ReturnType<typeof machineInfo>;
  measuredAt: string;
  workload: string;
  rps: Record<string, number>;
  /** Rate-limit script calls Valkey answered per 1,000 admitted requests of limitsRedis (leases: well under 1,000). */
  redisCallsPer1000: number;
  ratioToOff: Record<'limitsLocal' | 'limitsRedis' | 'tracingUnsampled' | 'tracingSampled', number>;
  fairness: {
    budgetPerKey: string;
    aloneRps: number;
    besideFloodRps: number;
    ratio: number;
    flooderAdmittedRps: number;
  };
}

async function otlpSink(): Promise<{ endpoint: string; close(): void }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => server.close(),
  };
}

function pairedRatio(variant: number[], off: number[]): number {
  return ratio(median(variant.map((rps, round) => rps / off[round]!)), 1);
}

export async function runOpsSection(quick: boolean, log: (line: string) => void): Promise<OpsResults> {
  const seconds = quick ? 2 : 5;
  // Five rounds: a fresh gateway per variant and round varies by about ±10% on its own
  // (three rounds once put the same build at 0.90 and 1.09 of off in two runs).
  const rounds = quick ? 1 : 5;
  const valkey = await startValkey(20_000 + Math.floor(Math.random() * 20_000));
  const sink = await otlpSink();
  // A budget no run reaches: every request is counted, none refused.
  const unreached = { RATE_LIMIT_DEFAULT: '1000000/s', RATE_LIMIT_DEFAULT_BURST: '1000000' };
  const variants: Record<string, Record<string, string>> = {
    off: {},
    limitsLocal: unreached,
    limitsRedis: { ...unreached, RATE_LIMIT_REDIS_URL: valkey.url },
    tracingUnsampled: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint, OTEL_TRACES_SAMPLER: 'always_off' },
    tracingSampled: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint, OTEL_TRACES_SAMPLER: 'always_on' },
  };
  const runs: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  const admin = new RespClient(parseRedisUrl(valkey.url), 5_000);
  const scriptCalls = async () => {
    const info = String(await admin.command(['INFO', 'commandstats']));
    const calls = (name: string) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
    return calls('evalsha') + calls('eval');
  };
  let redisCalls = 0;
  let redisAdmitted = 0;
  try {
    const names = Object.keys(variants);
    for (let round = 1; round <= rounds; round += 1) {
      // Each round starts at another variant, so no variant always runs first or last.
      const order = names.map((_, i) => names[(i + round - 1) % names.length]!);
      for (const name of order) {
        const env = variants[name]!;
        const child = await startChild('bench/servers/gateway.ts', { HTTP_ENGINE: 'uws', ...env });
        try {
          const url = `http://127.0.0.1:${child.info.port}/event/mcp`;
          await admittedRps(url, String(child.info.key), 1, 64); // warm-up
          const callsBefore = await scriptCalls();
          const rps = await admittedRps(url, String(child.info.key), seconds, 64);
          if (name === 'limitsRedis') {
            redisCalls += (await scriptCalls()) - callsBefore;
            redisAdmitted += rps * seconds;
          }
          runs[name]!.push(rps);
          log(`ops round ${round}: ${name} ${rps} req/s`);
        } finally {
          await child.stop();
        }
      }
    }

    // Fairness: both keys get 300/s with a small burst (so a run's admitted rate is the
    // budget, not the start-up credit); the measured key asks for more than that on 8
    // connections, the flooding key on 64.
    const fairEnv = { HTTP_ENGINE: 'uws', RATE_LIMIT_DEFAULT: '300/s', RATE_LIMIT_DEFAULT_BURST: '10' };
    const alone: number[] = [];
    const flooded: number[] = [];
    let flooderAdmitted = 0;
    for (let round = 1; round <= rounds; round += 1) {
      const child = await startChild('bench/servers/gateway.ts', fairEnv);
      try {
        const url = `http://127.0.0.1:${child.info.port}/event/mcp`;
        alone.push(await admittedRps(url, String(child.info.otherKey), seconds, 8));
        const [measured, flooder] = await Promise.all([
          admittedRps(url, String(child.info.otherKey), seconds, 8),
          admittedRps(url, String(child.info.key), seconds, 64),
        ]);
        flooded.push(measured);
        flooderAdmitted = flooder;
        log(
          `ops fairness round ${round}: alone ${alone.at(-1)}, beside a flood ${measured} (flooder ${flooder})`,
        );
      } finally {
        await child.stop();
      }
    }

    const results: OpsResults = {
      machine: machineInfo(),
      measuredAt: new Date().toISOString(),
      workload: `authenticated tools/list, 64 connections, ${seconds} s per variant, median of ${rounds} paired rounds (ratios: median of the per-round ratios)`,
      rps: Object.fromEntries(Object.entries(runs).map(([name, values]) => [name, median(values)])),
      redisCallsPer1000: Math.round((redisCalls / Math.max(1, redisAdmitted)) * 1000 * 100) / 100,
      // The median of each round's own ratio: a round's variants ran minutes apart at most,
      // so drift of the machine falls on both sides of each ratio alike.
      ratioToOff: {
        limitsLocal: pairedRatio(runs.limitsLocal!, runs.off!),
        limitsRedis: pairedRatio(runs.limitsRedis!, runs.off!),
        tracingUnsampled: pairedRatio(runs.tracingUnsampled!, runs.off!),
        tracingSampled: pairedRatio(runs.tracingSampled!, runs.off!),
      },
      fairness: {
        budgetPerKey: '300/s, burst 10',
        aloneRps: median(alone),
        besideFloodRps: median(flooded),
        ratio: ratio(median(flooded), median(alone)),
        flooderAdmittedRps: flooderAdmitted,
      },
    };
    log(JSON.stringify(results, null, 2));
    // A quick run is a smoke test: its figures are not the committed ones.
    if (!quick)
      await writeFile(
        join(benchRoot, 'bench', 'results', 'ops.json'),
        `${JSON.stringify(results, null, 2)}\n`,
      );
    return results;
  } finally {
    sink.close();
    await admin.close();
    await valkey.stop();
  }
}
