import { createServer } from 'node:net';
import type {
  BodyPieces,
  BodyResult,
  ClientAddressOf,
  HttpEngine,
  HttpResponse,
  PeerSource,
  RequestContext,
  RequestHandler,
  RequestHead,
  RunningServer,
} from './engine.ts';
import { AddressedHead, bodyLength, LINGER, portInUseError, statusLine, wholeBody } from './engine.ts';
import type { LoadedUws, UwsApp, UwsModule, UwsRequest, UwsResponse } from './uws-loader.ts';

/** uWS names the method in lower case; the common ones map to constants, not a new string each. */
function upperMethod(method: string): string {
  if (method === 'post') return 'POST';
  if (method === 'get') return 'GET';
  return method.toUpperCase();
}

// uWS invalidates the request object when the handler returns, so the head is copied
// first. The peer's address is asked of uWS only when read (see UwsExchange.readPeer).
function headOf(
  req: UwsRequest,
  peer: PeerSource,
  clientAddressOf: ClientAddressOf | undefined,
): RequestHead {
  const headers: Record<string, string> = {};
  req.forEach((name, value) => {
    const previous = headers[name];
    headers[name] = previous === undefined ? value : `${previous}, ${value}`;
  });
  return new AddressedHead(
    upperMethod(req.getMethod()),
    req.getUrl(),
    req.getQuery() ?? '',
    headers,
    peer,
    clientAddressOf,
  );
}

/**
 * uWS delivers the body only to an onData handler attached before the route handler
 * returns, so the body is read eagerly. Buffering stops as soon as a response is written
 * (a refused caller's upload is never kept), and a body past the limit, declared or
 * actual, is reported at once without being stored. After an early answer the same
 * handler counts what it drops, for the lingering close.
 */
class BodyReader {
  /** The client has sent the whole body (or declared none). */
  complete: boolean;
  readonly result: Promise<BodyResult>;
  /** Set once the answer went out before the body ended: told about every later chunk. */
  onDropped: ((bytes: number, isLast: boolean) => void) | null = null;
  /** The client went away (uWS reported the response aborted): nothing more may be written. */
  aborted = false;
  private resolve!: (result: BodyResult) => void;
  private chunks: Buffer[] = [];
  private size = 0;
  private settled = false;

  constructor(
    res: UwsResponse,
    head: RequestHead,
    private readonly maxBodyBytes: number,
    private readonly exchange: { readonly finished: boolean },
  ) {
    const declaredLength = head.headers['content-length'];
    const declaresBody = declaredLength !== undefined || head.headers['transfer-encoding'] !== undefined;
    this.complete = !declaresBody || declaredLength === '0';
    this.result = new Promise((resolve) => {
      this.resolve = resolve;
    });
    if (this.complete) this.settle({ ok: true, body: Buffer.alloc(0) });
    else if (declaredLength !== undefined && Number(declaredLength) > maxBodyBytes) {
      this.settle({ ok: false, reason: 'too-large' });
    }
    if (!this.complete) res.onData((chunk, isLast) => this.take(chunk, isLast));
  }

  private take(chunk: ArrayBuffer, isLast: boolean): void {
    if (isLast) this.complete = true;
    if (this.settled || this.exchange.finished) {
      this.chunks.length = 0;
      this.onDropped?.(chunk.byteLength, isLast);
      return;
    }
    this.size += chunk.byteLength;
    if (this.size > this.maxBodyBytes) {
      this.settle({ ok: false, reason: 'too-large' });
      return;
    }
    // The ArrayBuffer is reused by uWS after this callback: copy it.
    this.chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (isLast) {
      const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
      this.settle({ ok: true, body });
    }
  }

  /**
   * The client left: a body still coming never will, so whoever waits on it is told, and the
   * request ends (counted out of a drain) instead of waiting forever.
   */
  abort(): void {
    this.aborted = true;
    this.settle({ ok: false, reason: 'aborted' });
  }

  private settle(result: BodyResult): void {
    if (this.settled) return;
    this.settled = true;
    this.chunks = [];
    this.resolve(result);
  }
}

/**
 * The answer goes out before the body ended. uWS forbids touching a response after end(),
 * so the answer is written with write() (chunked) and ended once the client has sent the
 * rest; the client closes as told by `connection: close`. A client that goes past LINGER's
 * bounds or goes quiet mid-body has its connection cut instead.
 */
function answerAndLinger(
  res: UwsResponse,
  reader: BodyReader,
  body: string | Buffer,
  headers: HttpResponse['headers'],
): void {
  if (headers?.connection === undefined) res.writeHeader('connection', 'close');
  res.write(body);
  let dropped = 0;
  let ended = false;
  const finish = (complete: boolean) => {
    if (ended) return;
    ended = true;
    clearTimeout(total);
    clearTimeout(idle);
    reader.onDropped = null;
    if (reader.aborted) return;
    // end(…, true) in this uWS build writes a stray header after a chunked body: end
    // plainly, and cut only a client that overstayed.
    if (complete) res.cork(() => res.end(undefined, false));
    else res.close();
  };
  const total = setTimeout(() => finish(false), LINGER.maxMs);
  const idle = setTimeout(() => finish(false), LINGER.idleMs);
  reader.onDropped = (bytes, isLast) => {
    dropped += bytes;
    if (isLast) finish(true);
    else if (dropped > LINGER.maxBytes) finish(false);
    else idle.refresh();
  };
}

/** True when an exclusive bind of host:port succeeds (it is released at once). */
function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EADDRINUSE' ? resolve(false) : reject(error),
    );
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/** The body as pieces to write in order; a whole string body is encoded once here. */
function piecesOf(body: HttpResponse['body']): BodyPieces {
  if (body === undefined) return [];
  if (typeof body === 'string') return [Buffer.from(body)];
  return Buffer.isBuffer(body) ? [body] : body;
}

/**
 * Ends with tryEnd, piece by piece against the total length (uWS writes the content-length
 * once, then appends), so a body in pieces is never joined and "done" means every byte
 * reached the socket. tryEnd hands uWS only what the socket takes; under backpressure the
 * rest follows from onWritable. The returned function is called with false when the
 * response aborts before that.
 */
function endInPieces(
  res: UwsResponse,
  response: HttpResponse,
  onWritten: ((ok: boolean) => void) | undefined,
): (ok: boolean) => void {
  const pieces = piecesOf(response.body);
  const total = bodyLength(pieces);
  let reported = false;
  const report = (ok: boolean) => {
    if (reported) return;
    reported = true;
    onWritten?.(ok);
  };
  let startOffset = 0;
  let done = false;
  res.cork(() => {
    res.writeStatus(statusLine(response.status));
    writeHeaders(res, response.headers);
    startOffset = res.getWriteOffset();
    if (pieces.length === 0) done = res.tryEnd(EMPTY, 0)[1];
    for (const piece of pieces) {
      const [ok, finished] = res.tryEnd(piece, total);
      done = finished;
      if (!ok) break;
    }
  });
  if (done) {
    report(true);
    return report;
  }
  // The rare backpressured answer: what is left is sent from the joined body.
  const body = wholeBody(pieces) as Buffer;
  res.onWritable((offset) => {
    const [ok, finished] = res.tryEnd(body.subarray(offset - startOffset), total);
    if (finished) report(true);
    return ok;
  });
  return report;
}

const EMPTY = Buffer.alloc(0);

/**
 * uWS has copied what end() or write() is given by the time they return (to the socket,
 * its cork buffer or its own backpressure buffer), so an answer in pieces is joined into
 * one reused buffer instead of a new one per answer. Writing the pieces with tryEnd would
 * skip even this copy, but a socket under backpressure then needs onWritable to send the
 * rest, and pipelined requests read late by the client stalled that way in a test; end()
 * leaves the rest to uWS. Answers past the buffer's size are joined the ordinary way.
 */
const SCRATCH_BYTES = 64 * 1024;
let scratch: Buffer | undefined;

function joinedInScratch(pieces: BodyPieces): Buffer {
  scratch ??= Buffer.allocUnsafeSlow(SCRATCH_BYTES);
  let at = 0;
  for (const piece of pieces) {
    // A string takes at most 3 bytes per UTF-16 unit; set() is the plain copy, without
    // Buffer#copy's argument handling.
    const room = SCRATCH_BYTES - at;
    if (typeof piece === 'string') {
      if (piece.length * 3 > room) return wholeBody(pieces) as Buffer;
      at += scratch.write(piece, at);
    } else {
      if (piece.length > room) return wholeBody(pieces) as Buffer;
      scratch.set(piece, at);
      at += piece.length;
    }
  }
  return scratch.subarray(0, at);
}

/** A for-in, not Object.entries: no arrays made per answer. */
function writeHeaders(res: UwsResponse, headers: HttpResponse['headers']): void {
  for (const name in headers) res.writeHeader(name, headers[name]!);
}

export function createUwsEngine({ uws, build }: LoadedUws): HttpEngine {
  return {
    name: 'uws',
    build,
    async listen({ host, port, maxBodyBytes, sharedPort, clientAddressOf }, handler: RequestHandler) {
      // uWS listens with SO_REUSEPORT, so a second gateway on a taken port would start and
      // silently split connections with the first: bind once without it to find out.
      if (port !== 0 && !sharedPort && !(await portIsFree(host, port))) throw portInUseError(host, port);
      const app = uws.App();
      app.any('/*', (res, req) => serveRequest(res, req, handler, maxBodyBytes, clientAddressOf));
      return listenOn(uws, app, host, port);
    },
  };
}

function internalError(): HttpResponse {
  return { status: 500, headers: { 'content-type': 'application/json' }, body: '{"error":"internal error"}' };
}

/**
 * One request: its head copied, its body read eagerly, the handler's answer written unless
 * the client left. One object is the handler's context and holds the request's state, so a
 * request makes no closures but the three uWS and the promise need.
 */
class UwsExchange implements RequestContext, PeerSource {
  readonly head: RequestHead;
  readonly reader: BodyReader;
  /** Answered, or the client left: the response may no longer be touched. */
  finished = false;
  /** Most requests never look at the signal; an AbortController is made only for those that do. */
  private controller: AbortController | undefined;
  private reportWritten: ((ok: boolean) => void) | undefined;

  constructor(
    private readonly res: UwsResponse,
    req: UwsRequest,
    maxBodyBytes: number,
    clientAddressOf: ClientAddressOf | undefined,
  ) {
    this.head = headOf(req, this, clientAddressOf);
    // uWS keeps one onAborted handler per response: everything that cares goes here.
    res.onAborted(() => this.aborted());
    this.reader = new BodyReader(res, this.head, maxBodyBytes, this);
  }

  readBody(): Promise<BodyResult> {
    return this.reader.result;
  }

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.finished) this.controller.abort();
    return this.controller.signal;
  }

  /** uWS forbids touching a response after it aborted or ended. */
  readPeer(): string {
    return this.finished ? '' : Buffer.from(this.res.getRemoteAddressAsText()).toString();
  }

  answer(response: HttpResponse): void {
    if (this.finished) {
      response.onWritten?.(false);
      return;
    }
    this.finished = true;
    this.reportWritten = writeResponse(this.res, this.head.method, this.reader, response);
  }

  private aborted(): void {
    this.reader.abort();
    this.finished = true;
    this.controller?.abort();
    this.reportWritten?.(false);
  }
}

function serveRequest(
  res: UwsResponse,
  req: UwsRequest,
  handler: RequestHandler,
  maxBodyBytes: number,
  clientAddressOf: ClientAddressOf | undefined,
): void {
  const exchange = new UwsExchange(res, req, maxBodyBytes, clientAddressOf);
  handler(exchange).then(
    (response) => exchange.answer(response),
    () => exchange.answer(internalError()),
  );
}

/**
 * Writes the handler's answer. Returns the function that reports a late abort when the
 * answer waits to learn it reached the socket; otherwise tells the answer at once.
 */
function writeResponse(
  res: UwsResponse,
  method: string,
  reader: BodyReader,
  response: HttpResponse,
): ((ok: boolean) => void) | undefined {
  if (response.onWritten && method !== 'HEAD') return endInPieces(res, response, response.onWritten);
  const body = Array.isArray(response.body) ? joinedInScratch(response.body) : wholeBody(response.body);
  res.cork(() => {
    // uWS writes "200 OK" itself when no status was written.
    if (response.status !== 200) res.writeStatus(statusLine(response.status));
    writeHeaders(res, response.headers);
    if (method === 'HEAD') res.endWithoutBody(bodyLength(body), false);
    else if (!reader.complete) answerAndLinger(res, reader, body, response.headers);
    else res.end(body, false);
  });
  // A HEAD answer carries no body, so nothing it would report was delivered.
  response.onWritten?.(false);
  return undefined;
}

/** Listens on host:port; the running server can stop accepting, then close. */
function listenOn(uws: UwsModule, app: UwsApp, host: string, port: number): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (!socket) {
        reject(
          new Error(`uWebSockets.js could not listen on ${host}:${port} (address in use or not permitted)`),
        );
        return;
      }
      let accepting = true;
      const stopAccepting = () => {
        if (!accepting) return;
        accepting = false;
        uws.us_listen_socket_close(socket);
      };
      resolve({
        port: uws.us_socket_local_port(socket),
        stopAccepting,
        close: async () => {
          stopAccepting();
          app.close?.();
        },
      });
    });
  });
}
