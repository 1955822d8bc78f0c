import type {
  ConsumeInput,
  ConsumeResult,
  CreateTopicInput,
  CreateTopicResult,
  DeleteTopicInput,
  DeleteTopicResult,
  PublishInput,
  PublishResult,
  TopicsResult,
} from '../event/schemas.ts';
import type { TraceCarrier } from '../tracing.ts';

/** Bumped on any incompatible change; a peer speaking another version is refused at hello. */
export const IPC_PROTOCOL_VERSION = 3;

export interface WorkerStatus {
  /** Bootstrap servers are set and, for SASL protocols, the key and secret too. */
  configured: boolean;
  /** Names of the BROKER_* settings that are missing or invalid. */
  missingSettings: string[];
  brokerConfigured: boolean;
  credentialsConfigured: boolean;
  securityProtocol: 'SASL_SSL' | 'SASL_PLAINTEXT' | 'SSL' | 'PLAINTEXT';
  saslMechanism: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512' | null;
  bootstrapHosts: string[];
  defaultTopic: string | null;
  defaultGroup: string | null;
  topicAdminEnabled: boolean;
  /** The most recent broker failure (never containing a secret), cleared by the next success. */
  lastBrokerError: { message: string; at: string } | null;
  /** Whether the worker's periodic probe (every 2 s) reached the broker; null before the first probe. */
  brokerReachable: boolean | null;
  liveConsumers: number;
  /** Messages fetched from Kafka and waiting in group consumers for a poll to take them. */
  bufferedMessages: number;
  /**
   * Messages group polls handed out whose offsets are not committed yet (open leases, and
   * acknowledged ones awaiting their commit): what a crash of this worker now would deliver
   * again. Absent from workers older than the field.
   */
  uncommittedMessages?: number;
  /**
   * Of those, the ones under open leases (handed out, the gateway's settle not yet in): what
   * no design can avoid delivering again if this worker dies now.
   */
  leasedMessages?: number;
  workerId: string;
}

/**
 * A group poll's answer over IPC: the tool result plus `lease`, naming the messages handed
 * out. They stay uncommitted until the gateway settles the lease: `commit` once the answer
 * was written to the caller's HTTP connection, `rewind` when it could not be. A lease that
 * is not settled in time, or whose link closes, is rewound by the worker.
 */
export type ConsumeCallResult = ConsumeResult & { lease?: string };

/** Settles poll leases; answered after the resulting offset commits were attempted. */
export interface SettleParams {
  commit: string[];
  rewind: string[];
}
export interface SettleResult {
  /** Leases this worker still held and has now settled. */
  settled: number;
  /** Leases it no longer knew (already rewound after a timeout or a link loss): their messages are delivered again. */
  unknown: number;
}

/** Every call the gateway can make, with its parameters and result. */
export interface WorkerMethods {
  status: { params: Record<string, never>; result: WorkerStatus };
  publish: { params: PublishInput; result: PublishResult };
  consume: { params: ConsumeInput; result: ConsumeCallResult };
  settle: { params: SettleParams; result: SettleResult };
  topics: { params: Record<string, never>; result: TopicsResult };
  createTopic: { params: CreateTopicInput; result: CreateTopicResult };
  deleteTopic: { params: DeleteTopicInput; result: DeleteTopicResult };
  /**
   * The worker's Prometheus metrics as prom-client's getMetricsAsJSON() objects, for the
   * gateway to merge into its scrape (typed loosely: shared/ must not depend on prom-client).
   */
  metrics: { params: Record<string, never>; result: unknown[] };
}
export type WorkerMethod = keyof WorkerMethods;

/**
 * Stable codes for failures that cross the IPC link. The message is written for the
 * agent reading the tool result: what went wrong and what to do.
 */
export type WorkerErrorCode =
  | 'NOT_CONFIGURED'
  | 'NO_DEFAULT_TOPIC'
  | 'NO_DEFAULT_GROUP'
  | 'TOPIC_ADMIN_DISABLED'
  | 'UNKNOWN_TOPIC'
  | 'TOPIC_EXISTS'
  /** Internal or reserved topics ("__" prefix, or flagged internal by the broker) are never created or deleted. */
  | 'TOPIC_RESERVED'
  | 'INVALID_ARGUMENT'
  | 'AUTHENTICATION_FAILED'
  | 'BROKER_ERROR'
  | 'DEADLINE_EXCEEDED'
  | 'CANCELLED'
  /** Too many calls in flight or too many live consumers; retry shortly. */
  | 'OVERLOADED'
  | 'INTERNAL';

export interface WorkerErrorBody {
  code: WorkerErrorCode;
  message: string;
  retriable: boolean;
}

/**
 * Time the worker keeps for committing a poll's offsets and sending the answer after the
 * poll's own `timeout_ms`. A consume call's IPC deadline should be at least
 * `timeout_ms + CONSUME_DEADLINE_SLACK_MS` (see `callDeadlineMs`); with less, the worker
 * shortens the poll so that it can still commit and answer inside the deadline.
 */
export const CONSUME_DEADLINE_SLACK_MS = 2000;

/** A settle waits for the offset commit it causes; a slow commit must not hold the gateway. */
export const SETTLE_DEADLINE_MS = 10_000;

/** Deadline for calls that do one broker round trip or a few (publish, topics, admin). */
export const DEFAULT_CALL_DEADLINE_MS = 15_000;

/** The IPC deadline a caller should give a call: the poll budget plus slack for consume. */
export function callDeadlineMs<M extends WorkerMethod>(
  method: M,
  params: WorkerMethods[M]['params'],
): number {
  if (method === 'consume') return (params as ConsumeInput).timeout_ms + CONSUME_DEADLINE_SLACK_MS;
  if (method === 'status' || method === 'metrics') return 2000;
  if (method === 'settle') return SETTLE_DEADLINE_MS;
  return DEFAULT_CALL_DEADLINE_MS;
}

/** Frames on the link. `deadlineMs` is a relative budget: clocks of two hosts need not agree. */
export type IpcFrame =
  /**
   * Sent first by the gateway (with `token` when BROKER_WORKER_TOKEN is set), answered by
   * the worker (with its `workerId`).
   */
  | { t: 'hello'; version: number; workerId?: string; token?: string }
  /** `trace`: the caller's W3C trace context, so the worker's spans join the request's trace. */
  | { t: 'req'; id: number; method: WorkerMethod; params: unknown; deadlineMs: number; trace?: TraceCarrier }
  /**
   * Without `answerNow` the gateway has given the call up: it is aborted and a poll takes
   * nothing. With it (a draining gateway) a poll stops waiting and answers at once with
   * what it has, under a lease as usual. A worker that predates the field cancels instead.
   */
  | { t: 'cancel'; id: number; answerNow?: true }
  | { t: 'res'; id: number; result: unknown }
  | { t: 'err'; id: number; error: WorkerErrorBody }
  /**
   * Keepalive: the gateway pings a ready link every KEEPALIVE_INTERVAL_MS and the worker
   * answers at once, so a worker that is alive at the socket level but no longer runs (stopped,
   * wedged) is noticed within KEEPALIVE_TIMEOUT_MS instead of at each call's deadline.
   */
  | { t: 'ping'; n: number }
  | { t: 'pong'; n: number };

/** How often the gateway pings an otherwise quiet or busy link. */
export const KEEPALIVE_INTERVAL_MS = 500;
/** Silence (no byte from the worker) after which the gateway gives the link up. */
export const KEEPALIVE_TIMEOUT_MS = 2000;
