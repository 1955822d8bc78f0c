/**
 * The broker worker's default topic, as seen from the gateway. A signature covers the
 * topic, so a publish without `topic` must learn the default before it is signed; the
 * gateway then names that topic explicitly, so the record lands where the signature says.
 */
import { callDeadlineMs } from '../../../shared/ipc/messages.ts';
import type { BrokerCalls } from './broker-calls.ts';

/** A worker's default topic changes only when it restarts with other settings. */
const TTL_MS = 10_000;

export class DefaultTopic {
  private cached: { topic: string | null; until: number } | null = null;

  constructor(private readonly broker: BrokerCalls) {}

  /** Null when the worker has none; the publish then goes without a topic and the worker explains. */
  async get(signal: AbortSignal): Promise<string | null> {
    const now = Date.now();
    if (this.cached && this.cached.until > now) return this.cached.topic;
    const status = await this.broker.call('status', {}, { signal, timeoutMs: callDeadlineMs('status', {}) });
    this.cached = { topic: status.defaultTopic, until: now + TTL_MS };
    return status.defaultTopic;
  }
}
