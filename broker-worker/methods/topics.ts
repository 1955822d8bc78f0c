import type { z } from 'zod';
import {
  type CreateTopicResult,
  createTopicInput,
  type DeleteTopicResult,
  deleteTopicInput,
  type TopicsResult,
  topicsInput,
} from '../../shared/event/schemas.ts';
import type { BrokerClients } from '../broker.ts';
import { MethodError } from '../errors.ts';
import type { CallContext } from '../ipc/server.ts';
import { createTopicsAndWait } from '../kafka/create-topics.ts';
import { hasErrorType } from '../kafka/errors.ts';
import { brokerMarksInternal } from '../kafka/internals.ts';
import { isInternalTopic } from '../kafka/topic-directory.ts';
import { type MethodContext, requireClients } from './context.ts';
import { parseParams } from './params.ts';

export async function topics(ctx: MethodContext, params: unknown): Promise<TopicsResult> {
  parseParams(topicsInput, params);
  const clients = requireClients(ctx);
  return { topics: await clients.topics.list() };
}

function requireTopicAdmin(ctx: MethodContext, action: string): void {
  if (ctx.settings.broker.allowTopicAdmin) return;
  throw new MethodError(
    'TOPIC_ADMIN_DISABLED',
    `Topic ${action} is disabled on this server: BROKER_ALLOW_TOPIC_ADMIN is not set to \`true\`, so nothing was changed. ` +
      'Use an existing topic (event_topics lists them), or ask the operator to set BROKER_ALLOW_TOPIC_ADMIN=true ' +
      'or to manage topics in the hosting console.',
  );
}

function reservedTopicError(topic: string, action: 'create' | 'delete', why: string): MethodError {
  return new MethodError(
    'TOPIC_RESERVED',
    `Refused to ${action} topic "${topic}": ${why}. Kafka and its tools keep their own state in such topics ` +
      "(deleting __consumer_offsets, for instance, wipes every consumer group's position), so the event tools never " +
      `${action} them, whatever BROKER_ALLOW_TOPIC_ADMIN says. Nothing was changed; choose a name that does not start with "__".`,
  );
}

/** Names Kafka reserves for itself ("__" prefix) or platform tools ("_confluent"). */
function refuseReservedName(topic: string, action: 'create' | 'delete'): void {
  if (isInternalTopic(topic)) {
    throw reservedTopicError(
      topic,
      action,
      'names starting with "__" (or "_confluent") are reserved for internal topics',
    );
  }
}

/**
 * How creating or deleting a topic starts: arguments re-validated, never a reserved name,
 * the Kafka clients, and only where the operator allows topic administration.
 */
function adminCall<S extends z.ZodType<{ topic: string }>>(
  ctx: MethodContext,
  schema: S,
  params: unknown,
  action: 'create' | 'delete',
): { input: z.output<S>; clients: BrokerClients } {
  const input = parseParams(schema, params);
  refuseReservedName(input.topic, action);
  const clients = requireClients(ctx);
  requireTopicAdmin(ctx, action === 'create' ? 'creation' : 'deletion');
  return { input, clients };
}

/** Time given to the controller to create or delete a topic and elect its leaders. */
function adminTimeout(call: CallContext): number {
  return Math.max(1000, Math.min(10_000, call.deadlineAt - Date.now() - 500));
}

export async function createTopic(
  ctx: MethodContext,
  params: unknown,
  call: CallContext,
): Promise<CreateTopicResult> {
  const { input, clients } = adminCall(ctx, createTopicInput, params, 'create');
  const admin = await clients.admin.get();
  let created: boolean;
  try {
    created = await createTopicsAndWait(
      admin,
      [{ topic: input.topic, numPartitions: input.partitions, replicationFactor: input.replication_factor }],
      adminTimeout(call),
    );
  } catch (error) {
    if (hasErrorType(error, 'INVALID_REPLICATION_FACTOR')) {
      throw await replicationFactorError(ctx, input.replication_factor);
    }
    if (hasErrorType(error, 'TOPIC_ALREADY_EXISTS')) created = false;
    else if (hasErrorType(error, 'INVALID_PARTITIONS')) {
      throw new MethodError(
        'INVALID_ARGUMENT',
        `The broker refused ${input.partitions} partitions; use a smaller positive number.`,
      );
    } else throw error;
  } finally {
    clients.topics.invalidate();
  }
  if (!created) {
    throw new MethodError(
      'TOPIC_EXISTS',
      `Topic "${input.topic}" already exists, so nothing was changed. Use it as it is (event_topics shows its partitions), ` +
        'or delete it first with event_delete_topic if you really need different settings.',
    );
  }
  return {
    topic: input.topic,
    partitions: input.partitions,
    replication_factor: input.replication_factor,
    created: true,
  };
}

/** kafkajs drops the broker's own reason text, so the useful part is rebuilt from cluster size. */
async function replicationFactorError(ctx: MethodContext, factor: number): Promise<MethodError> {
  let brokers: number | null = null;
  try {
    const admin = await requireClients(ctx).admin.get();
    brokers = (await admin.describeCluster()).brokers.length;
  } catch {
    // The count is only a hint; the message below stands without it.
  }
  const size = brokers === null ? '' : ` (the cluster has ${brokers} broker${brokers === 1 ? '' : 's'})`;
  return new MethodError(
    'INVALID_ARGUMENT',
    `The broker refused replication_factor ${factor}: the replication factor is larger than the number of available brokers${size}. ` +
      'On a one-broker development cluster pass replication_factor: 1, or run three brokers (`npm run kafka -- start --brokers 3`) to keep the default 3 that managed hosting requires.',
  );
}

export async function deleteTopic(
  ctx: MethodContext,
  params: unknown,
  call: CallContext,
): Promise<DeleteTopicResult> {
  const { input, clients } = adminCall(ctx, deleteTopicInput, params, 'delete');
  clients.topics.invalidate();
  await clients.topics.requireExists(input.topic);
  if (await brokerMarksInternal(clients.kafka, input.topic)) {
    throw reservedTopicError(input.topic, 'delete', 'the broker marks it as an internal topic');
  }
  const admin = await clients.admin.get();
  try {
    await admin.deleteTopics({ topics: [input.topic], timeout: adminTimeout(call) });
  } finally {
    clients.topics.invalidate();
    // kafkajs clients that once used the topic fail every later metadata refresh; replace them.
    clients.publisher.reset();
    clients.groupless.flush();
    clients.consumers.retireTopic(input.topic);
  }
  return { topic: input.topic, deleted: true };
}
