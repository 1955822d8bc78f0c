/**
 * The one seam between HTTP servers and the gateway. Engines copy what they need out of
 * their native request objects before handing over, so nothing engine-specific (uWS's
 * short-lived request object, node's IncomingMessage) leaks into routing, auth or MCP.
 */
export interface RequestHead {
  /** Upper-case method, as sent. */
  method: string;
  /** Path exactly as sent, without the query string, never decoded. */
  path: string;
  query: string;
  /** Header names lower-cased; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /**
   * The socket's peer: a reverse proxy, when there is one. Both addresses are worked out
   * on first read (see AddressedHead), so read them while the request is live.
   */
  readonly remoteAddress: string;
  /**
   * Who sent the request: the peer, or the forwarded client when the peer is a trusted
   * proxy (TRUST_PROXY, see client-address.ts). Limits, the audit trail and logs use this.
   */
  readonly clientAddress: string;
}

/** Asks an engine for a request's peer address ('' once the request is no longer live). */
export interface PeerSource {
  readPeer(): string;
}

/** Who sent a request, from its peer and X-Forwarded-For (the rule is in client-address.ts). */
export type ClientAddressOf = (peer: string, forwardedFor: string | undefined) => string;

/**
 * A request head whose addresses are worked out on first read: uWS asks the kernel for the
 * peer each time (a system call and a new buffer, about 4 µs), and without metrics, audit
 * trail or tracing most requests are answered without anyone asking. The peer is readable
 * only while the request is live, so code that records an address after waiting (a call the
 * client may leave meanwhile) reads it before it waits; an address first read after the
 * answer or the client's leaving is ''.
 */
export class AddressedHead implements RequestHead {
  private peer: string | undefined;
  private client: string | undefined;

  constructor(
    readonly method: string,
    readonly path: string,
    readonly query: string,
    readonly headers: Record<string, string>,
    /** The peer's address, or what asks the engine for it on first read. */
    private readonly peerSource: string | PeerSource,
    private readonly clientOf: ClientAddressOf | undefined,
  ) {}

  get remoteAddress(): string {
    this.peer ??= typeof this.peerSource === 'string' ? this.peerSource : this.peerSource.readPeer();
    return this.peer;
  }

  get clientAddress(): string {
    if (this.client === undefined) {
      const peer = this.remoteAddress;
      this.client = this.clientOf ? this.clientOf(peer, this.headers['x-forwarded-for']) : peer;
    }
    return this.client;
  }
}

export type BodyResult = { ok: true; body: Buffer } | { ok: false; reason: 'too-large' | 'aborted' };

/**
 * A body already encoded in pieces, written in order with its length known up front: a
 * large pre-encoded answer goes out around its request id without being copied into a new
 * buffer per request. A short piece may stay a string (engines encode it as they write).
 */
export type BodyPieces = readonly (string | Buffer)[];

export interface HttpResponse {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer | BodyPieces;
  /**
   * Called exactly once by the engine: `true` once the whole response was handed to the
   * client's socket, `false` if the client was gone or the write failed. Group polls
   * commit their messages on `true` only (at-least-once delivery).
   */
  onWritten?(ok: boolean): void;
}

export interface RequestContext {
  head: RequestHead;
  /** The request body, collected up to the engine's limit. Reading it twice returns the same result. */
  readBody(): Promise<BodyResult>;
  /** Fires when the client goes away before the response is written. */
  signal: AbortSignal;
}

export type RequestHandler = (context: RequestContext) => Promise<HttpResponse>;

export interface ListenOptions {
  host: string;
  port: number;
  maxBodyBytes: number;
  /**
   * This listener joins a port the same process already listens on (a GATEWAY_THREADS
   * thread). Otherwise a port in use stops the start, even where the engine could share it.
   */
  sharedPort?: boolean;
  /** Who sent a request (TRUST_PROXY's rule); without it, the peer. */
  clientAddressOf?: ClientAddressOf;
}

/** The start-up error for a port another process holds. */
export function portInUseError(host: string, port: number): Error {
  return new Error(
    `${host}:${port} is already in use (another gateway or program listens there); stop it or choose another PORT`,
  );
}

/**
 * A lingering close, as nginx does it: after answering before the request body was read to
 * its end (401, 413, 415, ...), the engine keeps reading and dropping the rest of the body,
 * so a client that is still sending can read the answer instead of failing with EPIPE or
 * ECONNRESET when its write hits a closed socket. Nothing is kept, and a client that keeps
 * sending past these bounds, or goes quiet, is cut off.
 */
export const LINGER = {
  /** Most bytes read and dropped after the answer. */
  maxBytes: 64 * 1024 * 1024,
  /** Longest the connection is kept after the answer. */
  maxMs: 10_000,
  /** Longest silence from the client while lingering. */
  idleMs: 2_000,
} as const;

export interface RunningServer {
  port: number;
  /** Stops taking new connections; connections already open keep being served. */
  stopAccepting(): void;
  /** Stops accepting and cuts every connection. */
  close(): Promise<void>;
}

export interface HttpEngine {
  /** 'uws' or 'node'. */
  readonly name: 'uws' | 'node';
  /** Which build serves: the uWS package and binary, or the Node.js version. */
  readonly build: string;
  listen(options: ListenOptions, handler: RequestHandler): Promise<RunningServer>;
}

export const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  201: '201 Created',
  202: '202 Accepted',
  204: '204 No Content',
  303: '303 See Other',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  406: '406 Not Acceptable',
  413: '413 Payload Too Large',
  409: '409 Conflict',
  415: '415 Unsupported Media Type',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

export function statusLine(status: number): string {
  return STATUS_TEXT[status] ?? String(status);
}

/** The body's length in bytes. */
export function bodyLength(body: HttpResponse['body']): number {
  if (body === undefined) return 0;
  if (typeof body === 'string') return Buffer.byteLength(body);
  if (Buffer.isBuffer(body)) return body.length;
  let length = 0;
  for (const piece of body) length += typeof piece === 'string' ? Buffer.byteLength(piece) : piece.length;
  return length;
}

/** The body as one buffer or string, for the paths that write it whole (HEAD, lingering, tests). */
export function wholeBody(body: HttpResponse['body']): string | Buffer {
  if (body === undefined) return '';
  if (typeof body === 'string' || Buffer.isBuffer(body)) return body;
  return Buffer.concat(body.map((piece) => (typeof piece === 'string' ? Buffer.from(piece) : piece)));
}
