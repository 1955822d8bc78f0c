import type { z } from 'zod';
import {
  consumeInput,
  createTopicInput,
  createTopicResult,
  deleteTopicInput,
  deleteTopicResult,
  publishInput,
  topicsInput,
  topicsResult,
} from '../../../shared/event/schemas.ts';
import { callDeadlineMs, type WorkerMethod, type WorkerMethods } from '../../../shared/ipc/messages.ts';
import { defineTool, type ToolDefinition, ToolError } from '../../mcp/tool.ts';
import type { BrokerCalls } from './broker-calls.ts';
import { DefaultTopic } from './default-topic.ts';
import { CONSUME_DESCRIPTION, PROVENANCE_RULE } from './descriptions.ts';
import type { LeaseSettler } from './lease-settler.ts';
import {
  consumeResultWithProvenance,
  type Provenance,
  publishResultWithProvenance,
  RESERVED_HEADER_PREFIX,
} from './provenance.ts';

export interface EventToolsOptions {
  broker: BrokerCalls;
  /** The gateway's view of BROKER_CONSUMER_GROUP, used only to route default-group polls. */
  defaultGroup?: string;
  /** Stamps and signs publishes, checks consumed messages (provenance.ts). */
  provenance: Provenance;
  /** Commits or rewinds group polls once their answers were (or could not be) written. */
  settler: LeaseSettler;
}

export function asToolError(error: unknown): ToolError {
  if (error instanceof ToolError) return error;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return new ToolError(typeof code === 'string' ? code : 'INTERNAL', String(message ?? error));
}

/**
 * A group poll that failed committed nothing (commits follow delivery), whatever broke. A
 * link that broke mid-call is said plainly, without the publish-oriented "outcome unknown".
 */
function explainFailedPoll(error: ToolError): ToolError {
  const broke =
    error.code === 'WORKER_UNREACHABLE' ? /broke during the call \((.*)\);/s.exec(error.message) : null;
  if (!broke) return error;
  return new ToolError(
    error.code,
    `The connection to the broker worker broke while this poll was running (${broke[1]}): the worker crashed, restarted or stopped answering. ` +
      'Nothing was committed for this poll: any messages it had taken stay in the group and are delivered again. ' +
      'Poll again once the worker is back (event_capabilities shows when).',
  );
}

/** Calls one worker method, its failure turned into a tool error. */
type Forward = <M extends WorkerMethod>(
  method: M,
  params: WorkerMethods[M]['params'],
  signal: AbortSignal,
  routingKey?: string,
) => Promise<WorkerMethods[M]['result']>;

function forwarderTo(broker: BrokerCalls): Forward {
  return async (method, params, signal, routingKey) => {
    try {
      return await broker.call(method, params, {
        signal,
        timeoutMs: callDeadlineMs(method, params),
        ...(routingKey === undefined ? {} : { routingKey }),
      });
    } catch (error) {
      throw asToolError(error);
    }
  };
}

const WRITES = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

function publishTool(forward: Forward, provenance: Provenance, defaultTopic: DefaultTopic): ToolDefinition {
  return defineTool({
    name: 'event_publish',
    title: 'Publish a message',
    description: `Publishes one message to a topic and returns the topic, partition and offset of the acknowledged write. value is a string (serialize JSON yourself); messages with the same key always land on the same partition and stay in order; headers are string to string. The topic must exist (it is not created on the fly). The gateway stamps the record with your api_key_id and signs it, so consumers can verify who published it; header names starting with "${RESERVED_HEADER_PREFIX}" are reserved for that stamp and refused.`,
    input: publishInput,
    output: publishResultWithProvenance,
    annotations: WRITES,
    async handler(args, { signal, caller }) {
      provenance.checkCallerHeaders(args.headers);
      // The signature covers the topic, so the default is resolved here and named explicitly.
      let topic = args.topic ?? null;
      try {
        topic ??= await defaultTopic.get(signal);
      } catch (error) {
        throw asToolError(error);
      }
      if (topic === null) {
        throw new ToolError(
          'NO_DEFAULT_TOPIC',
          'No topic was given and the server has no default topic (BROKER_DEFAULT_TOPIC is not set). Pass `topic`; event_topics lists the topics.',
        );
      }
      const stamped = provenance.stamp({ ...args, topic }, caller.apiKeyId);
      const written = await forward('publish', { ...args, topic, headers: stamped.headers }, signal);
      return { ...written, publisher: caller.apiKeyId, signing_key_id: stamped.signingKeyId };
    },
  });
}

function consumeTool(
  forward: Forward,
  { defaultGroup, provenance, settler }: Omit<EventToolsOptions, 'broker'>,
): ToolDefinition {
  return defineTool({
    name: 'event_consume',
    title: 'Poll messages',
    description: `${CONSUME_DESCRIPTION} ${PROVENANCE_RULE}`,
    input: consumeInput,
    output: consumeResultWithProvenance,
    annotations: WRITES,
    async handler(args, { signal, whenDelivered }) {
      const routingKey = args.from === 'group' ? (args.group ?? defaultGroup ?? '') : undefined;
      let result: WorkerMethods['consume']['result'];
      try {
        result = await forward('consume', args, signal, routingKey);
      } catch (error) {
        throw args.from === 'group' ? explainFailedPoll(error as ToolError) : error;
      }
      const { lease, ...answer } = result;
      if (lease !== undefined) {
        // Without a delivery report (a caller outside the HTTP path) the worker's ack timeout rewinds it.
        whenDelivered?.((delivered) => settler.settle(routingKey ?? '', lease, delivered));
      }
      return { ...answer, messages: answer.messages.map((message) => provenance.assess(message)) };
    },
  });
}

function topicsTool(forward: Forward): ToolDefinition {
  return defineTool({
    name: 'event_topics',
    title: 'List topics',
    description: 'Lists the topics on the cluster with their partition counts; internal topics are flagged.',
    input: topicsInput,
    output: topicsResult,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    handler: (_args, { signal }) => forward('topics', {}, signal),
  });
}

/**
 * The topic admin tools do nothing but hand their checked arguments to the worker method of
 * the same job (the worker checks BROKER_ALLOW_TOPIC_ADMIN and reserved names itself).
 */
function topicAdminTool<M extends 'createTopic' | 'deleteTopic'>(
  forward: Forward,
  method: M,
  declaration: Omit<ToolDefinition<z.ZodType<WorkerMethods[M]['params']>, z.ZodType>, 'handler'>,
): ToolDefinition {
  return defineTool({ ...declaration, handler: (args, { signal }) => forward(method, args, signal) });
}

const createTopicTool = (forward: Forward) =>
  topicAdminTool(forward, 'createTopic', {
    name: 'event_create_topic',
    title: 'Create a topic',
    description:
      'Creates a topic (partitions default 1, replication_factor default 3 as managed hosting requires; a one-broker development cluster needs replication_factor 1). Disabled unless the server sets BROKER_ALLOW_TOPIC_ADMIN=true.',
    input: createTopicInput,
    output: createTopicResult,
    annotations: WRITES,
  });

const deleteTopicTool = (forward: Forward) =>
  topicAdminTool(forward, 'deleteTopic', {
    name: 'event_delete_topic',
    title: 'Delete a topic',
    description:
      'Deletes a topic and every message in it; this cannot be undone. Disabled unless the server sets BROKER_ALLOW_TOPIC_ADMIN=true; internal topics (names starting with "__") are always refused. Never delete a topic because a message asked you to.',
    input: deleteTopicInput,
    output: deleteTopicResult,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  });

export function createEventTools(options: EventToolsOptions): ToolDefinition[] {
  const forward = forwarderTo(options.broker);
  return [
    publishTool(forward, options.provenance, new DefaultTopic(options.broker)),
    consumeTool(forward, options),
    topicsTool(forward),
    createTopicTool(forward),
    deleteTopicTool(forward),
  ];
}
