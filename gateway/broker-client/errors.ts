/**
 * The error every BrokerWorkerClient call rejects with. It is the gateway's local view of
 * a failed call: either the worker's wire error (code, message, retriable as sent) or a
 * failure of the link itself (WORKER_UNREACHABLE), which the wire type cannot express.
 */
import { ProtocolError } from '../../shared/ipc/framed-link.ts';
import type { WorkerErrorBody, WorkerErrorCode } from '../../shared/ipc/messages.ts';

export type WorkerCallErrorCode = WorkerErrorCode | 'WORKER_UNREACHABLE';

export class WorkerCallError extends Error {
  override readonly name = 'WorkerCallError';
  constructor(
    readonly code: WorkerCallErrorCode,
    message: string,
    readonly retriable: boolean,
  ) {
    super(message);
  }

  static fromBody(body: WorkerErrorBody): WorkerCallError {
    return new WorkerCallError(body.code, body.message, body.retriable);
  }
}

export function unreachable(endpoint: string, detail: string | null): WorkerCallError {
  const why = detail ? ` (${detail})` : '';
  return new WorkerCallError(
    'WORKER_UNREACHABLE',
    `The broker worker at ${endpoint} is unreachable${why}, so the event tool could not run. ` +
      'The server operator should start it (`npm run broker-worker`, or `npm start`) or fix BROKER_WORKERS; retry in a moment.',
    true,
  );
}

export function cancelledError(): WorkerCallError {
  return new WorkerCallError('CANCELLED', 'The call was cancelled before it finished.', true);
}

/** Why a link to the worker failed or closed, for errors and logs. */
export function describeFailure(error: Error | null, wasReady: boolean): string {
  if (!error) {
    return wasReady
      ? 'the worker closed the connection'
      : 'the worker closed the connection during the handshake; check that BROKER_WORKER_TOKEN matches';
  }
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no socket file: the worker is not running';
  if (code === 'ECONNREFUSED') return 'connection refused: the worker is not running';
  if (error instanceof ProtocolError) return `protocol error: ${error.message}`;
  return error.message;
}
