/**
 * The gateway's connection to one broker worker: connects (hello first), multiplexes many
 * calls by id, and reconnects with capped, jittered backoff when the link drops.
 *
 * While the worker is down a call does not queue: it waits at most `unreachableWaitMs`
 * (triggering a connection attempt at once) and then fails with WORKER_UNREACHABLE.
 *
 * Each id is retired exactly once: by its answer, or, when the call timed out or was
 * cancelled, by the answer that still arrives later (the worker answers every request).
 * An answer for an id that was never sent or already retired is a protocol error and
 * closes the link.
 */
import { connect, type Socket } from 'node:net';
import { formatEndpoint, type WorkerEndpoint } from '../../shared/ipc/endpoint.ts';
import { FrameError } from '../../shared/ipc/frame-codec.ts';
import { FramedLink, ProtocolError } from '../../shared/ipc/framed-link.ts';
import {
  callDeadlineMs,
  IPC_PROTOCOL_VERSION,
  type IpcFrame,
  type WorkerMethod,
} from '../../shared/ipc/messages.ts';
import type { TraceCarrier } from '../../shared/tracing.ts';
import { cancelledError, describeFailure, unreachable, WorkerCallError } from './errors.ts';
import { startKeepalive } from './keepalive.ts';
import { DEFAULT_LINK_OPTIONS, type WorkerLinkOptions } from './link-options.ts';

export { DEFAULT_LINK_OPTIONS, type WorkerLinkOptions } from './link-options.ts';

/** Least time between two connection attempts that calls trigger while the worker is down. */
const MIN_ATTEMPT_SPACING_MS = 50;

/**
 * How long a poll asked to answer now (see endPolls) may take before it is given up on; a
 * worker that predates `answerNow` cancels instead, and its answer ends the wait sooner.
 */
export const ANSWER_NOW_GRACE_MS = 3000;

interface Pending {
  method: WorkerMethod;
  resolve(value: unknown): void;
  reject(error: WorkerCallError): void;
  cleanup(): void;
  /** Set once the poll was asked to answer now: what its caller gets if no answer comes. */
  ending?: WorkerCallError;
}

type State = 'waiting' | 'connecting' | 'ready' | 'closed';

export class WorkerLink {
  readonly label: string;
  workerId: string | null = null;
  private state: State = 'waiting';
  private link: FramedLink | null = null;
  private handshakeTimer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private keepaliveTimer: NodeJS.Timeout | null = null;
  private failuresInARow = 0;
  private lastAttemptAt = 0;
  private lastFailure: string | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly abandoned = new Set<number>();
  private readonly attemptWaiters = new Set<(ready: boolean) => void>();
  /** Set by endPolls: polls sent from then on are asked to answer now as well. */
  private pollsEnding: WorkerCallError | null = null;

  constructor(
    private readonly endpoint: WorkerEndpoint,
    private readonly options: WorkerLinkOptions = DEFAULT_LINK_OPTIONS,
  ) {
    this.label = formatEndpoint(endpoint);
  }

  get connected(): boolean {
    return this.state === 'ready';
  }

  get lastError(): string | null {
    return this.lastFailure;
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** Starts connecting in the background. */
  start(): void {
    this.attemptNow();
  }

  async call(
    method: WorkerMethod,
    params: unknown,
    timeoutMs: number,
    signal?: AbortSignal,
    trace?: TraceCarrier,
  ): Promise<unknown> {
    if (this.state === 'closed') throw unreachable(this.label, 'the gateway is shutting down');
    if (signal?.aborted) throw cancelledError();
    if (this.state !== 'ready') {
      const ready = await this.waitForLink(Math.min(this.options.unreachableWaitMs, timeoutMs), signal);
      if (signal?.aborted) throw cancelledError();
      if (!ready) throw unreachable(this.label, this.lastFailure);
    }
    if (this.pending.size >= this.options.maxInFlight) {
      throw new WorkerCallError(
        'OVERLOADED',
        `More than ${this.options.maxInFlight} calls are waiting on the broker worker at ${this.label}; retry shortly.`,
        true,
      );
    }
    const link = this.link;
    // The link can drop between the wake-up and here.
    if (this.state !== 'ready' || !link) throw unreachable(this.label, this.lastFailure);
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      const onAbort = () => this.abandon(id, cancelledError());
      const timer = setTimeout(
        () =>
          this.abandon(
            id,
            new WorkerCallError(
              'DEADLINE_EXCEEDED',
              `The broker worker did not answer the ${method} call within ${timeoutMs} ms. ` +
                'It may be overloaded or the broker slow; retry, and check event_capabilities if it keeps happening.',
              true,
            ),
          ),
        timeoutMs + this.options.replyGraceMs,
      );
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      this.pending.set(id, { method, resolve, reject, cleanup });
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        link.send({ t: 'req', id, method, params, deadlineMs: timeoutMs, ...(trace ? { trace } : {}) });
      } catch (error) {
        this.pending.delete(id);
        cleanup();
        if (!(error instanceof FrameError)) throw error;
        reject(
          new WorkerCallError(
            'INVALID_ARGUMENT',
            `The request is too large to send: ${error.message}.`,
            false,
          ),
        );
        return;
      }
      // A request accepted before the gateway began to stop can reach this point after
      // endPolls ran (its body was still arriving): it must not hold the drain either.
      if (this.pollsEnding) this.endPoll(id, this.pollsEnding);
    });
  }

  /**
   * The gateway is stopping: polls in flight are asked to answer now with what they have
   * (their messages are leased and committed once the answer is written, as for any poll).
   * A poll whose answer does not come within ANSWER_NOW_GRACE_MS, or that the worker
   * cancelled instead, is abandoned with `error` (an abandoned poll takes no message).
   * Polls sent later are treated alike. Every other call runs to its end.
   */
  endPolls(error: WorkerCallError): void {
    this.pollsEnding = error;
    for (const id of [...this.pending.keys()]) this.endPoll(id, error);
  }

  private endPoll(id: number, error: WorkerCallError): void {
    const entry = this.pending.get(id);
    if (entry?.method !== 'consume' || entry.ending) return;
    entry.ending = error;
    this.link?.send({ t: 'cancel', id, answerNow: true });
    const giveUp = setTimeout(() => this.abandon(id, error), ANSWER_NOW_GRACE_MS);
    const cleanup = entry.cleanup;
    entry.cleanup = () => {
      clearTimeout(giveUp);
      cleanup();
    };
  }

  /** Rejects every call and stops reconnecting. */
  close(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.clearTimers();
    this.failAll(unreachable(this.label, 'the gateway is shutting down'));
    this.link?.close();
    this.link = null;
    for (const wake of this.attemptWaiters) wake(false);
    this.attemptWaiters.clear();
  }

  private abandon(id: number, error: WorkerCallError): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    entry.cleanup();
    // The worker still answers this id; remember it so that answer is not a protocol error.
    this.abandoned.add(id);
    this.link?.send({ t: 'cancel', id });
    entry.reject(error);
  }

  /**
   * An abandoned poll's answer may still carry messages (it crossed the cancel). Nobody gets
   * it, so its lease is rewound now rather than at the worker's ack timeout.
   */
  private rewindAbandoned(link: FramedLink, frame: { t: 'res' | 'err'; result?: unknown }): void {
    const lease = frame.t === 'res' ? (frame.result as { lease?: unknown } | null)?.lease : undefined;
    if (typeof lease !== 'string') return;
    const id = this.nextId++;
    this.abandoned.add(id);
    const params = { commit: [], rewind: [lease] };
    link.send({ t: 'req', id, method: 'settle', params, deadlineMs: callDeadlineMs('settle', params) });
  }

  /** Resolves true once the link is up, false when an attempt fails or `ms` passes. */
  private waitForLink(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (this.state === 'waiting') {
      const since = Date.now() - this.lastAttemptAt;
      if (since >= MIN_ATTEMPT_SPACING_MS) this.attemptNow();
      else this.scheduleAttempt(MIN_ATTEMPT_SPACING_MS - since);
    }
    return new Promise<boolean>((resolve) => {
      const finish = (ready: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.attemptWaiters.delete(finish);
        resolve(ready);
      };
      const onAbort = () => finish(false);
      const timer = setTimeout(() => finish(false), ms);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.attemptWaiters.add(finish);
    });
  }

  private attemptNow(): void {
    if (this.state !== 'waiting') return;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.state = 'connecting';
    this.lastAttemptAt = Date.now();
    const socket: Socket =
      this.endpoint.kind === 'unix'
        ? connect(this.endpoint.path)
        : connect(this.endpoint.port, this.endpoint.host);
    const link = new FramedLink(socket, {
      onFrame: (frame) => this.onFrame(link, frame),
      onClose: (error) => this.onClose(link, error),
    });
    this.link = link;
    const token = this.options.token;
    socket.once('connect', () =>
      link.send({ t: 'hello', version: IPC_PROTOCOL_VERSION, ...(token ? { token } : {}) }),
    );
    this.handshakeTimer = setTimeout(
      () => link.close(new Error(`no hello within ${this.options.connectTimeoutMs} ms`)),
      this.options.connectTimeoutMs,
    );
  }

  private scheduleAttempt(delayMs: number): void {
    if (this.state !== 'waiting') return;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.attemptNow();
    }, delayMs);
    this.retryTimer.unref();
  }

  private onFrame(link: FramedLink, frame: IpcFrame): void {
    if (link !== this.link) return;
    if (this.state === 'connecting') {
      if (frame.t !== 'hello') {
        link.close(new ProtocolError(`expected hello, got "${frame.t}"`));
        return;
      }
      if (frame.version !== IPC_PROTOCOL_VERSION) {
        link.close(
          new ProtocolError(
            `the worker speaks IPC protocol ${frame.version}, this gateway ${IPC_PROTOCOL_VERSION}; deploy both from one release`,
          ),
        );
        return;
      }
      if (this.handshakeTimer) clearTimeout(this.handshakeTimer);
      this.handshakeTimer = null;
      this.state = 'ready';
      this.startKeepalive(link);
      this.workerId = frame.workerId ?? null;
      this.failuresInARow = 0;
      this.lastFailure = null;
      for (const wake of [...this.attemptWaiters]) wake(true);
      return;
    }
    if (frame.t === 'pong') return;
    if (frame.t !== 'res' && frame.t !== 'err') {
      link.close(new ProtocolError(`a worker must not send "${frame.t}" frames after hello`));
      return;
    }
    const entry = this.pending.get(frame.id);
    if (!entry) {
      if (this.abandoned.delete(frame.id)) {
        this.rewindAbandoned(link, frame);
        return;
      }
      link.close(new ProtocolError(`answer for unknown request id ${frame.id}`));
      return;
    }
    this.pending.delete(frame.id);
    entry.cleanup();
    if (frame.t === 'res') entry.resolve(frame.result);
    else if (entry.ending && frame.error.code === 'CANCELLED') entry.reject(entry.ending);
    else entry.reject(WorkerCallError.fromBody(frame.error));
  }

  private onClose(link: FramedLink, error: Error | null): void {
    if (link !== this.link) return;
    this.link = null;
    this.stopKeepalive();
    if (this.handshakeTimer) clearTimeout(this.handshakeTimer);
    this.handshakeTimer = null;
    const wasReady = this.state === 'ready';
    this.lastFailure = describeFailure(error, wasReady);
    this.failAll(
      wasReady
        ? new WorkerCallError(
            'WORKER_UNREACHABLE',
            `The connection to the broker worker at ${this.label} broke during the call (${this.lastFailure}); ` +
              'its outcome is unknown (a publish may have been written). Retry once the worker is back.',
            true,
          )
        : unreachable(this.label, this.lastFailure),
    );
    this.abandoned.clear();
    if (this.state === 'closed') return;
    this.state = 'waiting';
    for (const wake of [...this.attemptWaiters]) wake(false);
    this.scheduleAttempt(wasReady ? this.options.backoffBaseMs : this.backoff());
  }

  private startKeepalive(link: FramedLink): void {
    this.stopKeepalive();
    this.keepaliveTimer = startKeepalive(
      link,
      this.options.keepaliveIntervalMs,
      this.options.keepaliveTimeoutMs,
    );
  }

  private stopKeepalive(): void {
    if (this.keepaliveTimer) clearInterval(this.keepaliveTimer);
    this.keepaliveTimer = null;
  }

  /** Exponential in failures in a row, capped, with full jitter in the upper half. */
  private backoff(): number {
    const exp = Math.min(this.options.backoffCapMs, this.options.backoffBaseMs * 2 ** this.failuresInARow);
    this.failuresInARow = Math.min(this.failuresInARow + 1, 30);
    return Math.round(exp / 2 + Math.random() * (exp / 2));
  }

  private failAll(error: WorkerCallError): void {
    const entries = [...this.pending.values()];
    this.pending.clear();
    for (const entry of entries) {
      entry.cleanup();
      entry.reject(error);
    }
  }

  private clearTimers(): void {
    this.stopKeepalive();
    if (this.handshakeTimer) clearTimeout(this.handshakeTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.handshakeTimer = null;
    this.retryTimer = null;
  }
}
