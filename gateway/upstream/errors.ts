import { ToolError } from '../mcp/tool.ts';
import { redactText } from './redact.ts';

/**
 * Stable codes for every failure of a third-party call. Programs branch on the code; agents
 * read the message, which always says what to do next.
 */
export type UpstreamErrorCode =
  | 'NOT_CONFIGURED'
  | 'AUTH_REJECTED'
  | 'PERMISSION_DENIED'
  | 'NOT_FOUND'
  | 'INVALID_ARGUMENT'
  | 'RATE_LIMITED'
  | 'QUOTA_EXCEEDED'
  | 'UPSTREAM_UNAVAILABLE'
  | 'UPSTREAM_ERROR'
  | 'TIMEOUT'
  | 'CANCELLED';

export interface UpstreamErrorDetails {
  /** HTTP status of the upstream answer, when there was one. */
  status?: number;
  /** Seconds until the upstream accepts calls again, when it said so. */
  retryAfterS?: number;
}

/**
 * A ToolError with a stable code. The message starts with the code in brackets so an agent
 * reading only the text still sees it; the message is redacted before it is stored.
 */
export class UpstreamError extends ToolError {
  readonly status: number | undefined;
  readonly retryAfterS: number | undefined;

  constructor(code: UpstreamErrorCode, message: string, details: UpstreamErrorDetails = {}) {
    super(code, `[${code}] ${redactText(message)}`);
    this.name = 'UpstreamError';
    this.status = details.status;
    this.retryAfterS = details.retryAfterS;
  }
}

/** What a status means, and the default advice for it; namespaces refine both. */
export function codeForStatus(status: number): UpstreamErrorCode {
  if (status === 400 || status === 422) return 'INVALID_ARGUMENT';
  if (status === 401) return 'AUTH_REJECTED';
  if (status === 403) return 'PERMISSION_DENIED';
  if (status === 404 || status === 410) return 'NOT_FOUND';
  if (status === 408) return 'TIMEOUT';
  if (status === 429) return 'RATE_LIMITED';
  if (status >= 500) return 'UPSTREAM_UNAVAILABLE';
  return 'UPSTREAM_ERROR';
}

/** What each code means for the caller: listed in every upstream namespace's capabilities and docs. */
export const ADVICE: Readonly<Record<UpstreamErrorCode, string>> = {
  NOT_CONFIGURED: 'Set the missing setting and restart the gateway.',
  AUTH_REJECTED: 'The credentials were refused: check or renew them, then restart the gateway.',
  PERMISSION_DENIED:
    'The credentials work but lack access to this resource: grant access or use another one.',
  NOT_FOUND: 'Check the identifier (list the available ones first).',
  INVALID_ARGUMENT: 'Fix the arguments named in the message and call again.',
  RATE_LIMITED: 'Wait until the limit resets, then call again.',
  QUOTA_EXCEEDED: 'The quota is spent: wait for it to reset or reduce how much is asked per call.',
  UPSTREAM_UNAVAILABLE: 'The service is failing or unreachable: try again in a minute.',
  UPSTREAM_ERROR: 'The service answered unexpectedly: try again, or narrow the request.',
  TIMEOUT: 'The call ran out of time: narrow the request or try again.',
  CANCELLED: 'The request was cancelled by the client.',
};

export function adviceFor(code: UpstreamErrorCode): string {
  return ADVICE[code];
}
