/**
 * Tells the broker worker which group-poll answers reached their callers. A poll's
 * messages are committed only once its answer was handed to the caller's connection
 * (commit), and handed out again when it could not be (rewind). Settlements are batched
 * per worker over a few milliseconds: the caller already has its answer, so this delay
 * only postpones the commit, and a crash inside it means redelivery, never loss.
 */
import { callDeadlineMs, type SettleParams } from '../../../shared/ipc/messages.ts';
import type { BrokerCalls } from './broker-calls.ts';

/** How long settlements wait to be sent together. */
export const SETTLE_BATCH_MS = 5;

export class LeaseSettler {
  private readonly pending = new Map<string, SettleParams>();
  private timer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly broker: BrokerCalls,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** `routingKey` must be the one the poll went with, so the settlement reaches the same worker. */
  settle(routingKey: string, lease: string, delivered: boolean): void {
    let batch = this.pending.get(routingKey);
    if (!batch) {
      batch = { commit: [], rewind: [] };
      this.pending.set(routingKey, batch);
    }
    (delivered ? batch.commit : batch.rewind).push(lease);
    this.timer ??= setTimeout(() => void this.flush(), SETTLE_BATCH_MS);
  }

  /** Sends everything pending now and waits for the answers (used at shutdown). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batches = [...this.pending];
    this.pending.clear();
    for (const [routingKey, params] of batches) {
      // A failure (worker gone) needs no retry: the worker rewinds the leases of a closed link.
      const sent = this.broker
        .call('settle', params, { routingKey, timeoutMs: callDeadlineMs('settle', params) })
        .catch(this.onError);
      this.inFlight.add(sent);
      void sent.finally(() => this.inFlight.delete(sent));
    }
    await Promise.allSettled([...this.inFlight]);
  }
}
