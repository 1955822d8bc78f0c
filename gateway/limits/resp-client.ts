/**
 * Just enough of the Redis protocol (RESP2) for the shared rate limit: pipelined commands
 * over one connection, replies matched in order. It fails fast rather than queueing while
 * the server is away, because a limiter that waits on a dead store stalls every request
 * behind it; it reconnects on its own, so recovery needs no operator.
 * Why not a client library: docs/decisions/0153-own-resp-client-for-redis.md.
 */
import { connect, type Socket } from 'node:net';

export type RespValue = string | number | null | RespValue[] | RespError;

export class RespError extends Error {}

/** Any failure to get an answer: unreachable, timed out, connection lost. */
export class StoreUnavailableError extends Error {}

interface Pending {
  resolve(value: RespValue): void;
  reject(error: Error): void;
  sentAt: number;
}

export interface RespTarget {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db?: number;
}

/** redis://[user:password@]host[:port][/db]; the password stays in memory, never in messages. */
export function parseRedisUrl(raw: string): RespTarget {
  const url = new URL(raw);
  if (url.protocol !== 'redis:') throw new Error('only redis:// URLs are supported');
  if (!url.hostname) throw new Error('the URL names no host');
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : undefined;
  if (db !== undefined && !Number.isInteger(db)) throw new Error('the path must be a database number');
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : 6379,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(db !== undefined ? { db } : {}),
  };
}

function encode(args: readonly (string | number)[]): Buffer {
  const parts = [`*${args.length}\r\n`];
  for (const arg of args) {
    const text = String(arg);
    parts.push(`$${Buffer.byteLength(text)}\r\n${text}\r\n`);
  }
  return Buffer.from(parts.join(''));
}

/** Parses one reply at `offset`; undefined when the buffer does not hold all of it yet. */
function parseReply(buffer: Buffer, offset: number): { value: RespValue; end: number } | undefined {
  const lineEnd = buffer.indexOf('\r\n', offset);
  if (lineEnd < 0) return undefined;
  const type = String.fromCharCode(buffer[offset] as number);
  const line = buffer.toString('utf8', offset + 1, lineEnd);
  const next = lineEnd + 2;
  if (type === '+') return { value: line, end: next };
  if (type === '-') return { value: new RespError(line), end: next };
  if (type === ':') return { value: Number(line), end: next };
  if (type === '$') {
    const length = Number(line);
    if (length < 0) return { value: null, end: next };
    if (buffer.length < next + length + 2) return undefined;
    return { value: buffer.toString('utf8', next, next + length), end: next + length + 2 };
  }
  if (type === '*') {
    const count = Number(line);
    if (count < 0) return { value: null, end: next };
    const items: RespValue[] = [];
    let at = next;
    for (let i = 0; i < count; i += 1) {
      const item = parseReply(buffer, at);
      if (!item) return undefined;
      items.push(item.value);
      at = item.end;
    }
    return { value: items, end: at };
  }
  throw new StoreUnavailableError(`unexpected reply type ${JSON.stringify(type)} from the Redis server`);
}

export class RespClient {
  private socket: Socket | undefined;
  private ready = false;
  private readonly pending: Pending[] = [];
  private buffered: Buffer = Buffer.alloc(0);
  private retryAt = 0;
  private retryDelayMs = 100;
  private readonly watchdog: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly target: RespTarget,
    private readonly timeoutMs = 500,
  ) {
    // One timer for all commands: a timer per command would cost more than the command.
    this.watchdog = setInterval(() => this.checkDeadlines(), Math.max(10, timeoutMs / 2));
    this.watchdog.unref();
  }

  /** Sends one command; rejects with StoreUnavailableError when the server cannot answer now. */
  command(args: readonly (string | number)[]): Promise<RespValue> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('the Redis client is closed'));
    if (!this.socket) {
      // Fail fast between reconnect attempts instead of queueing behind a dead server.
      if (Date.now() < this.retryAt) {
        return Promise.reject(new StoreUnavailableError(`Redis at ${this.where()} is unreachable`));
      }
      this.open();
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject, sentAt: Date.now() });
      (this.socket as Socket).write(encode(args));
    });
  }

  private where(): string {
    return `${this.target.host}:${this.target.port}`;
  }

  private open(): void {
    const socket = connect({ host: this.target.host, port: this.target.port });
    socket.setNoDelay(true);
    this.socket = socket;
    this.buffered = Buffer.alloc(0);
    // AUTH and SELECT go first on the wire, so every later command runs authenticated.
    if (this.target.password !== undefined) {
      const auth = this.target.username
        ? ['AUTH', this.target.username, this.target.password]
        : ['AUTH', this.target.password];
      this.handshake(socket, auth);
    }
    if (this.target.db !== undefined) this.handshake(socket, ['SELECT', this.target.db]);
    socket.on('data', (chunk) => this.receive(chunk));
    socket.on('error', (error) => this.fail(socket, error.message));
    socket.on('close', () => this.fail(socket, 'connection closed'));
  }

  private handshake(socket: Socket, args: (string | number)[]): void {
    this.pending.push({
      resolve: (value) => {
        if (value instanceof RespError) this.fail(socket, `${args[0]} refused: ${value.message}`);
      },
      reject: () => {},
      sentAt: Date.now(),
    });
    socket.write(encode(args));
  }

  private receive(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    let offset = 0;
    for (;;) {
      const reply = parseReply(this.buffered, offset);
      if (!reply) break;
      offset = reply.end;
      const waiter = this.pending.shift();
      if (!this.ready) {
        this.ready = true;
        this.retryDelayMs = 100;
      }
      waiter?.resolve(reply.value);
    }
    this.buffered = offset === this.buffered.length ? Buffer.alloc(0) : this.buffered.subarray(offset);
  }

  private checkDeadlines(): void {
    const oldest = this.pending[0];
    if (oldest && this.socket && Date.now() - oldest.sentAt > this.timeoutMs) {
      this.fail(this.socket, `no answer within ${this.timeoutMs} ms`);
    }
  }

  /** Drops the connection and everything waiting on it; the next command after a back-off reconnects. */
  private fail(socket: Socket, reason: string): void {
    if (this.socket !== socket) return;
    this.socket = undefined;
    socket.destroy();
    this.ready = false;
    this.retryAt = Date.now() + this.retryDelayMs;
    this.retryDelayMs = Math.min(this.retryDelayMs * 2, 2_000);
    const error = new StoreUnavailableError(`Redis at ${this.where()}: ${reason}`);
    for (const waiter of this.pending.splice(0)) waiter.reject(error);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.watchdog);
    const socket = this.socket;
    if (socket) {
      this.socket = undefined;
      socket.destroy();
    }
    for (const waiter of this.pending.splice(0)) {
      waiter.reject(new StoreUnavailableError('the Redis client is closed'));
    }
  }
}
