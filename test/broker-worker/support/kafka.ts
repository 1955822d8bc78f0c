/** Direct kafkajs access for test set-up and checks, independent of the worker under test. */
import { randomBytes } from 'node:crypto';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { createTopicsAndWait } from '../../../broker-worker/kafka/create-topics.ts';

export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

export async function withAdmin<T>(bootstrap: string, work: (admin: Admin) => Promise<T>): Promise<T> {
  const kafka = new Kafka({ clientId: 'test-admin', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect();
  }
}

export async function createTopic(bootstrap: string, topic: string, partitions = 1): Promise<void> {
  await withAdmin(bootstrap, async (admin) => {
    await createTopicsAndWait(admin, [{ topic, numPartitions: partitions, replicationFactor: 1 }]);
  });
}

/** Committed offsets of a group for a topic: partition -> offset ("-1" when none). */
export async function groupOffsets(
  bootstrap: string,
  group: string,
  topic: string,
): Promise<Record<number, string>> {
  return withAdmin(bootstrap, async (admin) => {
    const [entry] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    const out: Record<number, string> = {};
    for (const p of entry?.partitions ?? []) out[p.partition] = p.offset;
    return out;
  });
}

/** Whether the broker knows the group at all (a group-less read must not create one). */
export async function groupExists(bootstrap: string, group: string): Promise<boolean> {
  return withAdmin(bootstrap, async (admin) => {
    const { groups } = await admin.listGroups();
    return groups.some((g) => g.groupId === group);
  });
}

/** The broker's view of a group: its state ("Empty", "Stable", "Dead", ...) and member count. */
export async function groupState(
  bootstrap: string,
  group: string,
): Promise<{ state: string; members: number }> {
  const { state, clientIds } = await describeGroup(bootstrap, group);
  return { state, members: clientIds.length };
}

/** The group's state and the client.id of each member (which worker holds it). */
export async function describeGroup(
  bootstrap: string,
  group: string,
): Promise<{ state: string; clientIds: string[] }> {
  return withAdmin(bootstrap, async (admin) => {
    const { groups } = await admin.describeGroups([group]);
    const found = groups[0];
    return { state: found?.state ?? 'Dead', clientIds: found?.members.map((m) => m.clientId) ?? [] };
  });
}

/** Writes records straight to Kafka (acks=all), in chunks, bypassing the worker under test. */
export async function produce(
  bootstrap: string,
  topic: string,
  messages: Array<{ key?: string; value: string }>,
): Promise<void> {
  const kafka = new Kafka({ clientId: 'test-producer', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  try {
    for (let i = 0; i < messages.length; i += 500) {
      await producer.send({ topic, acks: -1, messages: messages.slice(i, i + 500) });
    }
  } finally {
    await producer.disconnect();
  }
}
