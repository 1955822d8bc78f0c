import { z } from 'zod';
import {
  CONSUME_MAX_CAP,
  CONSUME_MAX_DEFAULT,
  CONSUME_TIMEOUT_CAP_MS,
  CONSUME_TIMEOUT_DEFAULT_MS,
  PARTITIONS_DEFAULT,
  PUBLISH_MAX_MESSAGE_BYTES,
  REPLICATION_FACTOR_DEFAULT,
  TOPIC_NAME_MAX_LENGTH,
} from './limits.ts';
import { isReservedHeader, RESERVED_HEADER_PREFIX, RESERVED_HEADERS_MAX_BYTES } from './reserved-headers.ts';

/** Kafka's own rule for legal topic names (kafka.common.Topic). */
export const topicName = z
  .string()
  .min(1, 'topic must not be empty')
  .max(TOPIC_NAME_MAX_LENGTH, `topic must be at most ${TOPIC_NAME_MAX_LENGTH} characters`)
  .regex(/^[a-zA-Z0-9._-]+$/, 'topic may contain only ASCII letters, digits, ".", "_" and "-"')
  .refine((name) => name !== '.' && name !== '..', 'topic must not be "." or ".."');

export const groupName = z
  .string()
  .min(1, 'group must not be empty')
  .max(255, 'group must be at most 255 characters');

export const capabilitiesInput = z.object({}).strict();

export const publishInput = z
  .object({
    value: z.string().describe('Message payload as a string; serialize JSON yourself.'),
    topic: topicName.optional().describe('Topic to write to. Default: the server default topic.'),
    key: z.string().optional().describe('Partition key; the same key always lands on the same partition.'),
    headers: z
      .record(z.string(), z.string())
      .optional()
      .describe(
        `String headers attached to the record. Names starting with "${RESERVED_HEADER_PREFIX}" are reserved for the gateway.`,
      ),
  })
  .strict()
  .superRefine((input, ctx) => {
    const { bytes, reservedBytes } = publishedBytes(input);
    if (reservedBytes > RESERVED_HEADERS_MAX_BYTES) {
      ctx.addIssue({
        code: 'custom',
        path: ['headers'],
        message: `headers starting with "${RESERVED_HEADER_PREFIX}" are reserved for the gateway's publisher stamp (here ${reservedBytes} bytes, at most ${RESERVED_HEADERS_MAX_BYTES}); rename them, for example with an "x-" prefix`,
      });
    }
    if (bytes <= PUBLISH_MAX_MESSAGE_BYTES) return;
    ctx.addIssue({
      code: 'custom',
      path: ['value'],
      message:
        `the message is ${bytes} bytes (UTF-8 value, key and headers) but event_publish takes at most ${PUBLISH_MAX_MESSAGE_BYTES} bytes per message. ` +
        'Split the payload into several messages (for example numbered parts with the same key, so they stay in order on one partition), ' +
        'or store it elsewhere and publish a reference to it (a URL or an id).',
    });
  });

/**
 * What a message weighs against PUBLISH_MAX_MESSAGE_BYTES. The gateway's stamp (reserved
 * headers, which callers cannot set) is weighed apart, against its own small allowance.
 */
function publishedBytes(input: { value: string; key?: string; headers?: Record<string, string> }): {
  bytes: number;
  reservedBytes: number;
} {
  let bytes = Buffer.byteLength(input.value) + (input.key === undefined ? 0 : Buffer.byteLength(input.key));
  let reservedBytes = 0;
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    const size = Buffer.byteLength(name) + Buffer.byteLength(value);
    if (isReservedHeader(name)) reservedBytes += size;
    else bytes += size;
  }
  return { bytes, reservedBytes };
}

export const consumeFrom = z.enum(['group', 'earliest', 'latest']);

export const consumeInput = z
  .object({
    topic: topicName.optional().describe('Topic to read. Default: the server default topic.'),
    from: consumeFrom
      .default('group')
      .describe(
        'group: read through the consumer group and commit what is returned. earliest/latest: read every partition from its start/end without touching any group.',
      ),
    group: groupName
      .optional()
      .describe('Consumer group (from=group only). Default: the server default group.'),
    max: z
      .number()
      .int()
      .min(1)
      .default(CONSUME_MAX_DEFAULT)
      .transform((n) => Math.min(n, CONSUME_MAX_CAP))
      .describe(`Most messages to return; capped at ${CONSUME_MAX_CAP}.`),
    timeout_ms: z
      .number()
      .int()
      .min(0)
      .default(CONSUME_TIMEOUT_DEFAULT_MS)
      .transform((n) => Math.min(n, CONSUME_TIMEOUT_CAP_MS))
      .describe(`Overall poll budget in milliseconds; capped at ${CONSUME_TIMEOUT_CAP_MS}.`),
  })
  .strict();

export const topicsInput = z.object({}).strict();

export const createTopicInput = z
  .object({
    topic: topicName,
    partitions: z.number().int().min(1).max(10_000).default(PARTITIONS_DEFAULT),
    replication_factor: z
      .number()
      .int()
      .min(1)
      .max(32_767)
      .default(REPLICATION_FACTOR_DEFAULT)
      .describe('Managed hosting requires 3; a one-broker dev cluster needs 1.'),
  })
  .strict();

export const deleteTopicInput = z.object({ topic: topicName }).strict();

export const publishResult = z.object({
  topic: z.string(),
  partition: z.number().int(),
  offset: z.number().int(),
  timestamp: z.string(),
});

export const consumedMessage = z.object({
  topic: z.string(),
  partition: z.number().int(),
  offset: z.number().int(),
  key: z.string().nullable(),
  value: z.string().nullable(),
  headers: z.record(z.string(), z.string()),
  timestamp: z.string(),
});

export const consumeResult = z.object({
  count: z.number().int(),
  group: z.string(),
  from: consumeFrom,
  topic: z.string(),
  messages: z.array(consumedMessage),
  /** A new group's first poll ended before the group was joined; `hint` says what to do. */
  joining: z.boolean().optional(),
  hint: z.string().optional(),
});

export const topicsResult = z.object({
  topics: z.array(z.object({ name: z.string(), partitions: z.number().int(), internal: z.boolean() })),
});

export const createTopicResult = z.object({
  topic: z.string(),
  partitions: z.number().int(),
  replication_factor: z.number().int(),
  created: z.boolean(),
});

export const deleteTopicResult = z.object({ topic: z.string(), deleted: z.boolean() });

export type PublishInput = z.output<typeof publishInput>;
export type ConsumeInput = z.output<typeof consumeInput>;
export type CreateTopicInput = z.output<typeof createTopicInput>;
export type DeleteTopicInput = z.output<typeof deleteTopicInput>;
export type PublishResult = z.output<typeof publishResult>;
export type ConsumedMessage = z.output<typeof consumedMessage>;
export type ConsumeResult = z.output<typeof consumeResult>;
export type TopicsResult = z.output<typeof topicsResult>;
export type CreateTopicResult = z.output<typeof createTopicResult>;
export type DeleteTopicResult = z.output<typeof deleteTopicResult>;
