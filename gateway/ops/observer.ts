/**
 * The seam between the router and what watches it (metrics, the audit trail): the router
 * describes each request once it is answered, and knows nothing of who listens.
 */
import type { Outcome } from './metrics.ts';

export interface RequestRecord {
  /** Start of the request, epoch milliseconds. */
  at: number;
  /** null when the path named no namespace (a refused key on another path). */
  namespace: string | null;
  method: string | null;
  /** As named by the call (cut short); `knownTool` says whether this namespace has it. */
  tool: string | null;
  knownTool: boolean;
  outcome: Outcome;
  errorCode: string | null;
  status: number;
  keyId: string | null;
  ownerId: string | null;
  /** Who sent the request (behind a trusted proxy, the forwarded client). */
  clientAddress: string;
  /** The socket's peer: the proxy, when there is one. */
  peerAddress: string;
  seconds: number;
  /** The request's trace (continued from `traceparent` or new) when tracing is on; else null. */
  traceId: string | null;
}

export interface RequestObserver {
  /** A routed MCP request begins (for the in-flight gauge). */
  started(): void;
  /** The same request was answered. */
  finished(record: RequestRecord): void;
  /** The API-key check refused a request (no started() before it). */
  refused(record: RequestRecord, reason: string): void;
}

/** The error code of a request RATE_LIMIT_ON_STORE_ERROR=deny refused while Redis was away. */
export const STORE_UNAVAILABLE = 'rate_limit_store_unavailable';

/** Outcome from the HTTP status when the call itself said nothing more specific. */
export function outcomeOfStatus(status: number): Outcome {
  if (status === 429) return 'rate_limited';
  if (status === 401 || status === 403) return 'denied';
  return status >= 400 ? 'error' : 'ok';
}
