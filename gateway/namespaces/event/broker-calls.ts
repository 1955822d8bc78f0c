import type { WorkerMethod, WorkerMethods } from '../../../shared/ipc/messages.ts';

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs: number;
  /** Calls with the same key go to the same broker worker: the consumer group, so its consumer lives in one place. */
  routingKey?: string;
}

/** What the event tools need from the IPC client; kept narrow so tools never see the transport. */
export interface BrokerCalls {
  call<M extends WorkerMethod>(
    method: M,
    params: WorkerMethods[M]['params'],
    options: CallOptions,
  ): Promise<WorkerMethods[M]['result']>;
}
