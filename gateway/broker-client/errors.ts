/**
 * The error every BrokerWorkerClient call rejects with. It is the gateway's local view of
 * a failed call: either the worker's wire error (code, message, retriable as sent) or a
 * failure of the link itself (WORKER_UNREACHABLE), which the wire type cannot express.
 */
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
