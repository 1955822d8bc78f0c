/** How a gateway's link to one broker worker behaves: timeouts, limits, keepalive. */
import { KEEPALIVE_INTERVAL_MS, KEEPALIVE_TIMEOUT_MS } from '../../shared/ipc/messages.ts';

export interface WorkerLinkOptions {
  /** Connect plus hello must finish within this. */
  connectTimeoutMs: number;
  /** Longest a call waits for a link that is down before failing WORKER_UNREACHABLE. */
  unreachableWaitMs: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  /** Calls in flight on this link; more are refused with OVERLOADED. */
  maxInFlight: number;
  /** Extra wait past a call's deadline for the worker's own answer to travel back. */
  replyGraceMs: number;
  /** Sent in hello when the worker requires BROKER_WORKER_TOKEN. */
  token: string | null;
  /** Ping period on a ready link. */
  keepaliveIntervalMs: number;
  /** Silence from the worker after which the link is closed and its calls fail. */
  keepaliveTimeoutMs: number;
}

export const DEFAULT_LINK_OPTIONS: WorkerLinkOptions = {
  connectTimeoutMs: 1000,
  unreachableWaitMs: 1000,
  backoffBaseMs: 100,
  backoffCapMs: 5000,
  maxInFlight: 10_000,
  replyGraceMs: 250,
  token: null,
  keepaliveIntervalMs: KEEPALIVE_INTERVAL_MS,
  keepaliveTimeoutMs: KEEPALIVE_TIMEOUT_MS,
};
