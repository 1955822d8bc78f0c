/**
 * Failures inside the worker. A MethodError carries a stable code and a message written
 * for the agent that will read it in a tool result; the IPC server turns it (and anything
 * else thrown) into the wire body `WorkerErrorBody`, which is a separate, plain type.
 */
import type { WorkerErrorBody, WorkerErrorCode } from '../shared/ipc/messages.ts';

export class MethodError extends Error {
  override readonly name = 'MethodError';
  constructor(
    readonly code: WorkerErrorCode,
    message: string,
    readonly retriable = false,
  ) {
    super(message);
  }
}

export function toErrorBody(error: unknown): WorkerErrorBody {
  if (error instanceof MethodError)
    return { code: error.code, message: error.message, retriable: error.retriable };
  const message = error instanceof Error ? error.message : String(error);
  return {
    code: 'INTERNAL',
    message: `The broker worker failed unexpectedly: ${message}. Retry; if it keeps failing, check the broker worker's log.`,
    retriable: true,
  };
}

export function cancelled(): MethodError {
  return new MethodError('CANCELLED', 'The call was cancelled by the gateway before it finished.', true);
}

export function deadlineExceeded(what: string, ms: number, lastBrokerError: string | null): MethodError {
  const cause = lastBrokerError ? ` Last broker error: ${lastBrokerError}` : '';
  return new MethodError(
    'DEADLINE_EXCEEDED',
    `${what} did not finish within ${ms} ms.${cause} Check event_capabilities for broker status, then retry.`,
    true,
  );
}
