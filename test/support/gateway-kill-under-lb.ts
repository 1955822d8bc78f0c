/**
 * kill -9 of one gateway of a fleet (test/support/pairs.ts) while callers publish through
 * HAProxy (test/support/haproxy.ts), then its restart: what the callers saw in each phase
 * (before, killed until HAProxy marks it DOWN, down, restarting, back in rotation), when
 * each step came, and the values acknowledged, for reading the topic back. Shared by
 * test/fleet/pairs.test.ts and `npm run chaos -- fleet`.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Haproxy } from './haproxy.ts';
import { waitFor } from './harness.ts';
import { call, type Pairs } from './pairs.ts';

export const KILL_PHASES = ['before', 'killed', 'down', 'restarting', 'back'] as const;
export type KillPhase = (typeof KILL_PHASES)[number];

export interface KillTally {
  answered: number;
  /** A thrown call: an HTTP error status, a reset. */
  unanswered: number;
  /** A tool error: answered, and refused. */
  toolErrors: number;
  /** The first few failures, with the time since the kill. */
  errors: string[];
}

export interface GatewayKillReport {
  tally: Record<KillPhase, KillTally>;
  /** Epoch ms of kill, down (HAProxy marked it DOWN), restart, listening, ready (/readyz 200), up. */
  marks: Record<string, number>;
  /** Calls that failed once HAProxy had marked the gateway DOWN, whenever they started. */
  failedLate: string[];
  /** Values whose publish was acknowledged. */
  acknowledged: string[];
  /** Longest time without an answered call, in ms. */
  longestPauseMs: number;
  sent: number;
  /** True when every step came within MAX_CALLS calls. */
  bounded: boolean;
}

const MAX_CALLS = 20_000;

/** Kills host `index` (default 0) under load from `callers`, which reach the fleet through `lb`. */
export async function gatewayKillUnderLb(options: {
  fleet: Pairs;
  lb: Haproxy;
  callers: Client[];
  topic: string;
  index?: number;
}): Promise<GatewayKillReport> {
  const { fleet, lb, topic } = options;
  const index = options.index ?? 0;
  const name = lb.names[index]!;
  let phase: KillPhase = 'before';
  const tally = Object.fromEntries(
    KILL_PHASES.map((p) => [p, { answered: 0, unanswered: 0, toolErrors: 0, errors: [] as string[] }]),
  ) as Record<KillPhase, KillTally>;
  const marks: Record<string, number> = {};
  const mark = (step: string) => {
    marks[step] = Date.now();
  };
  const failedLate: string[] = [];
  const acknowledged: string[] = [];
  let lastAnsweredAt = Date.now();
  let longestPauseMs = 0;
  let stop = false;
  let sent = 0;
  const load = options.callers.map(async (c) => {
    while (!stop && sent < MAX_CALLS) {
      const at = phase;
      const value = `k${sent++}`;
      const result = await call(c, 'event_publish', { topic, value });
      if (result.ok) {
        tally[at].answered++;
        acknowledged.push(value);
        longestPauseMs = Math.max(longestPauseMs, Date.now() - lastAnsweredAt);
        lastAnsweredAt = Date.now();
      } else if (result.data === undefined) tally[at].unanswered++;
      else tally[at].toolErrors++;
      if (!result.ok && tally[at].errors.length < 5)
        tally[at].errors.push(
          `${Date.now() - (marks.kill ?? 0)} ms after the kill: ${result.text.slice(0, 160)}`,
        );
      if (!result.ok && phase !== 'before' && phase !== 'killed')
        failedLate.push(`${at} → ${phase}: ${result.text}`);
    }
  });
  const until = (what: string, check: () => boolean | Promise<boolean>) =>
    waitFor(async () => (await check()) || sent >= MAX_CALLS, { what, timeoutMs: 120_000, intervalMs: 50 });
  const stat = async () => (await lb.stats())[name]!;
  try {
    await until('50 calls answered before the kill', () => tally.before.answered >= 50);
    mark('kill');
    // killGateway sends SIGKILL before its first await: a call started from here on was not
    // in flight at the kill, even if this process (on a loaded machine) sees the exit later.
    const killed = fleet.killGateway(index);
    phase = 'killed';
    await killed;
    await until(`HAProxy to mark ${name} DOWN`, async () => (await stat()).status.startsWith('DOWN'));
    mark('down');
    phase = 'down';
    await until(`100 calls answered with ${name} down`, () => tally.down.answered >= 100);
    mark('restart');
    phase = 'restarting';
    await fleet.restartGateway(index);
    mark('listening');
    await until(`${name} /readyz to pass`, async () => (await fleet.readyz(index)) === 200);
    mark('ready');
    await until(`HAProxy to mark ${name} UP`, async () => (await stat()).status === 'UP');
    mark('up');
    const backFrom = (await stat()).answered2xx;
    phase = 'back';
    await until(`${name} to answer 20 calls again`, async () => (await stat()).answered2xx >= backFrom + 20);
  } finally {
    stop = true;
    await Promise.all(load);
  }
  return { tally, marks, failedLate, acknowledged, longestPauseMs, sent, bounded: sent < MAX_CALLS };
}
