/** Limits of the event tools, shared so the gateway's schemas and the worker's loops agree. */
export const CONSUME_MAX_DEFAULT = 10;
export const CONSUME_MAX_CAP = 100;
export const CONSUME_TIMEOUT_DEFAULT_MS = 5000;
/** Above this a poll would hold an HTTP request and a consumer for too long; callers poll again instead. */
export const CONSUME_TIMEOUT_CAP_MS = 30_000;
export const TOPIC_NAME_MAX_LENGTH = 249;
export const PARTITIONS_DEFAULT = 1;
export const REPLICATION_FACTOR_DEFAULT = 3;
/**
 * Largest message event_publish takes: value, key and headers in UTF-8 bytes. Kafka brokers
 * refuse records past message.max.bytes (1048588 by default, managed services often the
 * same); this stays under it with room for the record batch's own framing.
 */
export const PUBLISH_MAX_MESSAGE_BYTES = 1_000_000;
