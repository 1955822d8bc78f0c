/** The shape a consumed record takes on the wire, built from a kafkajs message. */
import type { KafkaMessage } from 'kafkajs';
import type { ConsumedMessage } from '../../shared/event/schemas.ts';

/** A message waiting in a buffer, with what the buffer needs to order, size and commit it. */
export interface BufferedMessage {
  partition: number;
  offset: number;
  /** Approximate encoded size, for the result byte budget. */
  bytes: number;
  message: ConsumedMessage;
}

function text(value: Buffer | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : value.toString('utf8');
}

/**
 * Header values arrive as Buffers (or arrays when a key repeats). A repeated key keeps its
 * last value, as Java's `Headers.lastHeader` does.
 */
function headers(raw: KafkaMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (!raw) return out;
  for (const [name, value] of Object.entries(raw)) {
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    const decoded = text(last);
    if (decoded !== null) out[name] = decoded;
  }
  return out;
}

/** The largest time a Date holds; toISOString throws past it. */
const MAX_DATE_MS = 8.64e15;

/**
 * A CreateTime that no Date can hold (another producer's, on a broker that accepts any)
 * reads as unknown, like a negative one: throwing here would fail its whole batch each
 * time it is fetched, so neither it nor anything after it in its partition would be read.
 */
function isoTimestamp(ms: string): string {
  const n = Number(ms);
  return Number.isFinite(n) && n >= 0 && n <= MAX_DATE_MS
    ? new Date(n).toISOString()
    : new Date(0).toISOString();
}

export function toBufferedMessage(topic: string, partition: number, raw: KafkaMessage): BufferedMessage {
  const message: ConsumedMessage = {
    topic,
    partition,
    offset: Number(raw.offset),
    key: text(raw.key),
    value: text(raw.value),
    headers: headers(raw.headers),
    timestamp: isoTimestamp(raw.timestamp),
  };
  let bytes = 64 + topic.length + (message.key?.length ?? 0) + (message.value?.length ?? 0);
  for (const [name, value] of Object.entries(message.headers)) bytes += name.length + value.length + 4;
  return { partition, offset: message.offset, bytes, message };
}
