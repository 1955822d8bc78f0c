/**
 * HAProxy in front of a fleet of gateways (test/support/pairs.ts), and what it says of each
 * gateway over time: a store outage is judged by whether the load balancer kept or dropped
 * the gateways, not only by what the callers got. Shared by the through-HAProxy store tests.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type findHaproxy, type Haproxy, startHaproxy } from './haproxy.ts';
import { freePort, waitFor } from './harness.ts';
import type { Pairs } from './pairs.ts';

export interface Balanced {
  lb: Haproxy;
  stop(): Promise<void>;
}

/** HAProxy running deploy/haproxy/haproxy.cfg over `fleet`, once it marks every gateway UP. */
export async function balance(
  found: Awaited<ReturnType<typeof findHaproxy>>,
  fleet: Pairs,
): Promise<Balanced> {
  const dir = await mkdtemp(join(tmpdir(), 'mcp-fleet-lb-'));
  let lb: Haproxy | undefined;
  const stop = async () => {
    await lb?.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    lb = await startHaproxy(found as { path: string; env: Record<string, string> }, {
      dir,
      port: await freePort(),
      backends: fleet.hosts.map((host) => ({ address: host.address, opsPort: host.opsPort })),
    });
    await allUp(lb);
  } catch (error) {
    await stop();
    throw error;
  }
  return { lb, stop };
}

export function allUp(lb: Haproxy, timeoutMs = 60_000): Promise<true> {
  return waitFor(async () => Object.values(await lb.stats()).every((s) => s.status === 'UP'), {
    what: 'HAProxy to mark every gateway UP',
    timeoutMs,
    intervalMs: 100,
  });
}

export interface StatusSample {
  at: number;
  /** Per server name, HAProxy's status (UP, DOWN, "UP 1/2" while going down…). */
  statuses: Record<string, string>;
}

export interface Watch {
  samples: StatusSample[];
  /** The latest sample: every server DOWN (HAProxy has no gateway to send a call to). */
  noneUp(): boolean;
  stop(): Promise<void>;
}

/** Reads HAProxy's server statuses every `intervalMs` until stopped. */
export function watchServers(lb: Haproxy, intervalMs = 100): Watch {
  const samples: StatusSample[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const stats = await lb.stats().catch(() => undefined);
      if (stats) {
        const statuses = Object.fromEntries(Object.entries(stats).map(([name, s]) => [name, s.status]));
        samples.push({ at: Date.now(), statuses });
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    samples,
    noneUp: () => {
      const last = samples.at(-1);
      return last !== undefined && Object.values(last.statuses).every((s) => s.startsWith('DOWN'));
    },
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** The samples in [from, to) in which some server was not plainly UP, as `time: name=status…`. */
export function notUp(samples: StatusSample[], from = 0, to = Number.POSITIVE_INFINITY): string[] {
  return samples
    .filter((s) => s.at >= from && s.at < to && Object.values(s.statuses).some((status) => status !== 'UP'))
    .map((s) => `${s.at - from} ms: ${JSON.stringify(s.statuses)}`);
}
