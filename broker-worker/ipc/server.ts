/**
 * The worker's end of the IPC link: accepts gateway connections on a unix socket or TCP,
 * answers hello, runs each request with its own deadline and cancel signal, and sends
 * exactly one answer (res or err) per request id, so the gateway can always retire an id.
 */
import { timingSafeEqual } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { chmod, mkdir, unlink } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { formatEndpoint, type WorkerEndpoint } from '../../shared/ipc/endpoint.ts';
import { FrameError } from '../../shared/ipc/frame-codec.ts';
import { FramedLink, ProtocolError } from '../../shared/ipc/framed-link.ts';
import { IPC_PROTOCOL_VERSION, type IpcFrame, type WorkerMethod } from '../../shared/ipc/messages.ts';
import type { TraceCarrier } from '../../shared/tracing.ts';
import { untilAborted } from '../../shared/until-aborted.ts';
import { cancelled, MethodError, toErrorBody } from '../errors.ts';
import type { Logger } from '../logger.ts';

export interface CallContext {
  /** Aborted when the gateway cancels, the deadline passes, or the link closes. */
  signal: AbortSignal;
  /** Absolute time (Date.now() clock of this host) by which the answer must be sent. */
  deadlineAt: number;
  /** Aborted when the link the call came on closes (what a poll lease is bound to). */
  link: AbortSignal;
  /** Aborted when a draining gateway asks for the answer now: a poll answers with what it has. */
  answerNow: AbortSignal;
  /** The gateway's trace context for this call, when its request is traced. */
  trace?: TraceCarrier;
}

export type Dispatch = (method: WorkerMethod, params: unknown, ctx: CallContext) => Promise<unknown>;

export interface IpcServerOptions {
  endpoint: WorkerEndpoint;
  workerId: string;
  dispatch: Dispatch;
  logger: Logger;
  /**
   * Methods that watch `ctx.signal` themselves and must be allowed to finish what they
   * started (consume commits offsets before it answers). Others are answered with
   * DEADLINE_EXCEEDED / CANCELLED as soon as the signal fires.
   */
  selfTimed?: ReadonlySet<WorkerMethod>;
  maxInFlightPerLink?: number;
  /**
   * Shared secret a gateway must present in its hello (BROKER_WORKER_TOKEN). Needed when the
   * worker listens on TCP beyond loopback: the link itself carries no other credential.
   */
  token?: string | null;
  /** The error sent when a call runs past its deadline (lets the service add context). */
  deadlineError?: (method: WorkerMethod, deadlineMs: number) => MethodError;
}

/** How long a self-timed method may overrun its deadline before it is answered for. */
const SELF_TIMED_GRACE_MS = 5000;

interface ActiveCall {
  controller: AbortController;
  answerNow: AbortController;
  timer: NodeJS.Timeout;
}

class LinkSession {
  private helloDone = false;
  private readonly calls = new Map<number, ActiveCall>();
  private readonly open = new AbortController();
  readonly link: FramedLink;

  constructor(
    socket: Socket,
    private readonly server: IpcServer,
    private readonly options: IpcServerOptions,
    private readonly log: Logger,
  ) {
    // Every lease handed out on this link listens for the link's close (its messages go back
    // to the group), and removes its listener when it is committed, rewound or timed out: a
    // busy link legitimately carries more than the ten listeners Node warns about (the
    // bench's 1,000 groups made it warn).
    setMaxListeners(0, this.open.signal);
    this.link = new FramedLink(socket, {
      onFrame: (frame) => this.onFrame(frame),
      onClose: (error) => this.onClose(error),
    });
  }

  get inFlight(): number {
    return this.calls.size;
  }

  private onFrame(frame: IpcFrame): void {
    switch (frame.t) {
      case 'hello':
        this.onHello(frame.version, frame.token);
        return;
      case 'req':
        if (!this.helloDone) {
          this.link.close(new ProtocolError('request before hello'));
          return;
        }
        this.onRequest(frame.id, frame.method, frame.params, frame.deadlineMs, frame.trace);
        return;
      case 'ping':
        // Answered even before hello and while draining: it only says "this process runs".
        this.link.send({ t: 'pong', n: frame.n });
        return;
      case 'cancel': {
        // An unknown id is normal here: the answer and the cancel crossed on the wire.
        const call = this.calls.get(frame.id);
        if (frame.answerNow) call?.answerNow.abort();
        else call?.controller.abort(cancelled());
        return;
      }
      default:
        this.link.close(new ProtocolError(`a gateway must not send "${frame.t}" frames`));
    }
  }

  private onHello(version: number, token: string | undefined): void {
    if (this.helloDone) {
      this.link.close(new ProtocolError('second hello'));
      return;
    }
    if (this.options.token && !sameSecret(this.options.token, token ?? '')) {
      // Nothing is answered, not even the worker's id, to a peer without the token.
      this.log.warn('gateway hello without the right BROKER_WORKER_TOKEN; closing');
      this.link.close();
      return;
    }
    this.link.send({ t: 'hello', version: IPC_PROTOCOL_VERSION, workerId: this.options.workerId });
    if (version !== IPC_PROTOCOL_VERSION) {
      this.log.warn({ peerVersion: version }, 'gateway speaks another IPC protocol version; closing');
      this.link.close();
      return;
    }
    this.helloDone = true;
  }

  private onRequest(
    id: number,
    method: WorkerMethod,
    params: unknown,
    deadlineMs: number,
    trace: TraceCarrier | undefined,
  ): void {
    if (this.calls.has(id)) {
      this.link.close(new ProtocolError(`request id ${id} is already in flight`));
      return;
    }
    const max = this.options.maxInFlightPerLink ?? 4096;
    // Settling leases is how polls answered during a drain get committed: always taken.
    const refuse = method !== 'settle' && (this.calls.size >= max || this.server.draining);
    if (refuse) {
      const error = this.server.draining
        ? new MethodError('OVERLOADED', 'The broker worker is shutting down; retry in a moment.', true)
        : new MethodError(
            'OVERLOADED',
            `More than ${max} calls are in flight on this link; retry shortly.`,
            true,
          );
      this.link.send({ t: 'err', id, error: toErrorBody(error) });
      return;
    }

    const controller = new AbortController();
    const deadlineAt = Date.now() + deadlineMs;
    const selfTimed = this.options.selfTimed?.has(method) ?? false;
    const timer = setTimeout(() => {
      const error =
        this.options.deadlineError?.(method, deadlineMs) ??
        new MethodError(
          'DEADLINE_EXCEEDED',
          `The ${method} call ran past its ${deadlineMs} ms deadline.`,
          true,
        );
      controller.abort(error);
    }, deadlineMs);
    const answerNow = new AbortController();
    this.calls.set(id, { controller, answerNow, timer });

    const work = this.options.dispatch(method, params, {
      signal: controller.signal,
      deadlineAt,
      link: this.open.signal,
      answerNow: answerNow.signal,
      ...(trace ? { trace } : {}),
    });
    const answer = selfTimed
      ? withBackstop(work, deadlineMs + SELF_TIMED_GRACE_MS, method)
      : untilAborted(work, controller.signal);
    answer.then(
      (result) => this.answer(id, { t: 'res', id, result }),
      (error: unknown) => this.answer(id, { t: 'err', id, error: toErrorBody(error) }),
    );
  }

  private answer(id: number, frame: IpcFrame): void {
    const call = this.calls.get(id);
    if (!call) return;
    clearTimeout(call.timer);
    this.calls.delete(id);
    try {
      this.link.send(frame);
    } catch (error) {
      if (!(error instanceof FrameError)) throw error;
      const body = toErrorBody(
        new MethodError(
          'INTERNAL',
          `The answer was too large for the IPC link (${error.message}); ask for fewer messages.`,
        ),
      );
      this.link.send({ t: 'err', id, error: body });
    }
    this.server.callFinished();
  }

  private onClose(error: Error | null): void {
    if (error) this.log.warn({ err: error.message }, 'IPC link closed because of a fault');
    for (const call of this.calls.values()) call.controller.abort(cancelled());
    this.open.abort();
    this.server.linkClosed(this);
  }
}

function sameSecret(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

function withBackstop<T>(work: Promise<T>, ms: number, method: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new MethodError('DEADLINE_EXCEEDED', `The ${method} call did not finish in time.`, true)),
      ms,
    );
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

export class IpcServer {
  private server: Server | null = null;
  private readonly sessions = new Set<LinkSession>();
  private drainWaiters: Array<() => void> = [];
  draining = false;

  constructor(private readonly options: IpcServerOptions) {}

  get address(): string {
    return formatEndpoint(this.options.endpoint);
  }

  async listen(): Promise<void> {
    const { endpoint } = this.options;
    if (endpoint.kind === 'unix') await prepareSocketPath(endpoint.path);
    const server = createServer((socket) => {
      const session = new LinkSession(socket, this, this.options, this.options.logger);
      this.sessions.add(session);
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      const done = () => {
        server.off('error', reject);
        resolve();
      };
      if (endpoint.kind === 'unix') server.listen(endpoint.path, done);
      else server.listen(endpoint.port, endpoint.host, done);
    });
    server.on('error', (error) => this.options.logger.error({ err: error.message }, 'IPC server error'));
    // Only this user's processes may talk to the worker: the link carries no credentials.
    if (endpoint.kind === 'unix') await chmod(endpoint.path, 0o600);
  }

  /** The TCP port actually bound (useful with port 0). */
  get boundPort(): number | null {
    const address = this.server?.address();
    return address && typeof address === 'object' ? address.port : null;
  }

  get inFlight(): number {
    let total = 0;
    for (const session of this.sessions) total += session.inFlight;
    return total;
  }

  /** Stops taking new calls and waits (up to `timeoutMs`) for the running ones to answer. */
  async drain(timeoutMs: number): Promise<void> {
    this.draining = true;
    this.server?.close();
    if (this.inFlight === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.drainWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Closes every link and removes the socket file. */
  async close(): Promise<void> {
    this.draining = true;
    for (const session of this.sessions) session.link.close();
    const server = this.server;
    this.server = null;
    if (server?.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    if (this.options.endpoint.kind === 'unix')
      await unlink(this.options.endpoint.path).catch(() => undefined);
  }

  /** @internal */
  callFinished(): void {
    if (this.draining && this.inFlight === 0) {
      for (const wake of this.drainWaiters.splice(0)) wake();
    }
  }

  /** @internal */
  linkClosed(session: LinkSession): void {
    this.sessions.delete(session);
    this.callFinished();
  }
}

/**
 * A socket file left by a worker that died is removed; one that a live worker still
 * answers on is not, because two workers on one socket would split consumer groups.
 */
async function prepareSocketPath(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const alive = await new Promise<boolean>((resolve) => {
    const probe = connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (alive) throw new Error(`another broker worker is already listening on unix:${path}`);
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}
