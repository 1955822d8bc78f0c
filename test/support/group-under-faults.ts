/**
 * One consumer group polled through both gateways of a fleet (test/support/fleet.ts) while
 * faults strike at set points of its progress: the messages are published first (acks from
 * all in-sync replicas), then polled until every one was delivered, and a little longer so
 * that late redeliveries (rewound leases) are counted too.
 *
 * The floor is what no design can avoid delivering again: the messages under a killed
 * worker's open leases (handed out, their answers not yet settled) at the instant it died,
 * read from its status just before the kill. Beside it, `uncommittedAtKills` adds the
 * acknowledged messages whose commit had not landed yet, which a design can shrink. A Kafka
 * broker's death takes no lease with it, so it adds nothing to either.
 */
import { Kafka, logLevel } from 'kafkajs';
import { createTopicsAndWait } from '../../broker-worker/kafka/create-topics.ts';
import type { Fleet } from './fleet.ts';

/** A worker kill (-9, started again after workerDownMs), or anything else done to the cluster. */
export type FaultKind =
  | { kind: 'worker'; which: 'owner' | 'other' }
  | { kind: 'action'; name: string; run(topic: string): Promise<void> };

export interface FaultPlan {
  /** Strikes once this share (0..1) of the messages was delivered. */
  at: number;
  fault: FaultKind;
}

export interface GroupRunOptions {
  fleet: Fleet;
  bootstrap: string;
  topic: string;
  group: string;
  messages: number;
  partitions?: number;
  faults: FaultPlan[];
  /** How long a killed worker stays down. Default 2 s, as FLEET.md measured. */
  workerDownMs?: number;
  /** Polling loops (alternating gateways). Default 4. */
  pollers?: number;
  /** Messages per poll. Default 10. */
  max?: number;
  /**
   * A poller's pause after each answer, as an agent working on its messages: it keeps
   * messages flowing while the faults strike, instead of draining the topic in seconds.
   * Default 250 ms.
   */
  workMs?: number;
  /** Gives up polling after this long. Default 180 s. */
  deadlineMs?: number;
  /** Polls go on this long after the last first delivery, to count late redeliveries. Default 7 s. */
  settleMs?: number;
  log?: (line: string) => void;
}

export interface FaultRecord {
  fault: string;
  /** Messages under the killed worker's open leases when it died (0 for a broker). */
  floor: number;
  /** Messages the killed worker had handed out and not committed (open leases included). */
  uncommitted: number;
}

export interface GroupReport {
  messages: number;
  acknowledged: number;
  delivered: number;
  lost: number;
  duplicated: number;
  floor: number;
  uncommittedAtKills: number;
  /** Polls answered with an error (the caller got no messages from them). */
  unanswered: number;
  /** Longest time without a new message while some were still undelivered, in ms. */
  longestPauseMs: number;
  faults: FaultRecord[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function publishDirect(
  bootstrap: string,
  topic: string,
  count: number,
  partitions: number,
): Promise<Set<string>> {
  const kafka = new Kafka({ brokers: bootstrap.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await createTopicsAndWait(admin, [{ topic, numPartitions: partitions, replicationFactor: 3 }]);
  await admin.disconnect();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const acknowledged = new Set<string>();
  try {
    for (let start = 0; start < count; start += 200) {
      const batch = Array.from({ length: Math.min(200, count - start) }, (_, i) => `m-${start + i}`);
      await producer.send({ topic, acks: -1, messages: batch.map((value) => ({ key: value, value })) });
      for (const value of batch) acknowledged.add(value);
    }
  } finally {
    await producer.disconnect();
  }
  return acknowledged;
}

function describeFault(fault: FaultKind): string {
  return fault.kind === 'worker' ? `kill -9 ${fault.which} worker` : fault.name;
}

export async function runGroupUnderFaults(options: GroupRunOptions): Promise<GroupReport> {
  const { fleet, topic, group } = options;
  const log = options.log ?? (() => {});
  const acknowledged = await publishDirect(
    options.bootstrap,
    topic,
    options.messages,
    options.partitions ?? 3,
  );
  log(`${acknowledged.size} messages published to ${topic}`);

  const deliveries = new Map<string, number>();
  let unanswered = 0;
  let lastNewAt = Date.now();
  let longestPauseMs = 0;
  let polling = true;
  const owner = fleet.ownerOf(group);

  async function poller(index: number): Promise<void> {
    const gateway = index % fleet.gateways.length;
    while (polling) {
      const answer = await fleet.call<{ messages: Array<{ value: string }> }>(gateway, 'event_consume', {
        topic,
        group,
        max: options.max ?? 10,
        timeout_ms: 1000,
      });
      if (!answer.ok) {
        unanswered += 1;
        await sleep(200);
        continue;
      }
      const now = Date.now();
      for (const { value } of answer.data.messages) {
        const seen = deliveries.get(value) ?? 0;
        if (seen === 0) {
          longestPauseMs = Math.max(longestPauseMs, now - lastNewAt);
          lastNewAt = now;
        }
        deliveries.set(value, seen + 1);
      }
      await sleep(options.workMs ?? 250);
    }
  }

  const records: FaultRecord[] = [];
  async function strike(fault: FaultKind): Promise<void> {
    const name = describeFault(fault);
    if (fault.kind === 'action') {
      log(name);
      records.push({ fault: name, floor: 0, uncommitted: 0 });
      await fault.run(topic);
      return;
    }
    const worker = fault.which === 'owner' ? owner : 1 - owner;
    // Read as close to the kill as the status round trip allows.
    const held = await fleet.uncommitted(worker).catch(() => ({ uncommitted: 0, leased: 0 }));
    await fleet.killWorker(worker);
    log(`${name} (${held.leased} under open leases, ${held.uncommitted} handed out and uncommitted)`);
    records.push({ fault: name, floor: held.leased, uncommitted: held.uncommitted });
    await sleep(options.workerDownMs ?? 2000);
    await fleet.restartWorker(worker);
  }

  const pollers = Array.from({ length: options.pollers ?? 4 }, (_, i) => poller(i));
  const progress = setInterval(
    () => log(`${deliveries.size} of ${acknowledged.size} delivered, ${unanswered} polls unanswered`),
    10_000,
  );
  const deadline = Date.now() + (options.deadlineMs ?? 180_000);
  const plan = [...options.faults].sort((a, b) => a.at - b.at);
  for (const { at, fault } of plan) {
    while (deliveries.size < at * options.messages && Date.now() < deadline) await sleep(20);
    if (Date.now() >= deadline) break;
    await strike(fault);
  }
  while (deliveries.size < acknowledged.size && Date.now() < deadline) await sleep(100);
  log(`all ${deliveries.size} delivered at least once; polling on to count late redeliveries`);
  await sleep(options.settleMs ?? 7000);
  polling = false;
  clearInterval(progress);
  await Promise.all(pollers);

  let duplicated = 0;
  for (const count of deliveries.values()) duplicated += count - 1;
  return {
    messages: options.messages,
    acknowledged: acknowledged.size,
    delivered: deliveries.size,
    lost: [...acknowledged].filter((value) => !deliveries.has(value)).length,
    duplicated,
    floor: records.reduce((sum, r) => sum + r.floor, 0),
    uncommittedAtKills: records.reduce((sum, r) => sum + r.uncommitted, 0),
    unanswered,
    longestPauseMs,
    faults: records,
  };
}
