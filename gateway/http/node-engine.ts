import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AddressedHead,
  type BodyResult,
  bodyLength,
  type ClientAddressOf,
  type HttpEngine,
  type HttpResponse,
  LINGER,
  portInUseError,
  type RequestHandler,
  type RequestHead,
} from './engine.ts';

function headOf(req: IncomingMessage, clientAddressOf: ClientAddressOf | undefined): RequestHead {
  const url = req.url ?? '/';
  const queryAt = url.indexOf('?');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  // Read now: node:http keeps a socket's peer once asked, so this costs one system call
  // per connection, and the address stays known after the client leaves.
  const peer = req.socket.remoteAddress ?? '';
  return new AddressedHead(
    (req.method ?? 'GET').toUpperCase(),
    queryAt === -1 ? url : url.slice(0, queryAt),
    queryAt === -1 ? '' : url.slice(queryAt + 1),
    headers,
    peer,
    clientAddressOf,
  );
}

/** Resolves as soon as the body is known to be too large, so the 413 goes out without reading the rest. */
function collectBody(req: IncomingMessage, maxBodyBytes: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    if (Number(req.headers['content-length'] ?? 0) > maxBodyBytes) {
      resolve({ ok: false, reason: 'too-large' });
      return;
    }
    // The body is asked for after the key check, which awaits: a client that left meanwhile
    // fired 'aborted' before anyone listened, and would leave this promise, and the
    // request, in flight for good.
    if (req.destroyed && !req.readableEnded) {
      resolve({ ok: false, reason: 'aborted' });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > maxBodyBytes) {
        tooLarge = true;
        chunks.length = 0;
        resolve({ ok: false, reason: 'too-large' });
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve({ ok: true, body: Buffer.concat(chunks) }));
    req.on('aborted', () => resolve({ ok: false, reason: 'aborted' }));
    req.on('error', () => resolve({ ok: false, reason: 'aborted' }));
    // After 'end' this changes nothing; before it, the body will not come.
    req.on('close', () => resolve({ ok: false, reason: 'aborted' }));
  });
}

/**
 * The answer went out before the body was read to its end: the connection closes after it,
 * but only once the client has finished sending (or passed LINGER's bounds). node:http would
 * destroy the socket right after the answer, and a destroy with unread bytes sends a reset
 * that can wipe the answer from the client's receive buffer.
 */
function lingerAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket;
  const cut = () => socket.destroy();
  const total = setTimeout(cut, LINGER.maxMs);
  const idle = setTimeout(cut, LINGER.idleMs);
  socket.once('close', () => {
    clearTimeout(total);
    clearTimeout(idle);
  });
  // Half-close instead: the FIN follows the answer, reading goes on until the client is done.
  socket.destroySoon = () => {
    if (socket.writable) socket.end();
  };
  let dropped = 0;
  // Attached after node's own clean-up for a finished response (which detaches 'data' listeners).
  res.once('finish', () => {
    req.on('data', (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > LINGER.maxBytes) cut();
      else idle.refresh();
    });
    req.resume();
  });
}

function send(req: IncomingMessage, res: ServerResponse, response: HttpResponse): void {
  if (res.destroyed) {
    response.onWritten?.(false);
    return;
  }
  if (response.onWritten) reportWritten(res, response.onWritten);
  const body = response.body ?? '';
  const headers: Record<string, string | number> = {
    ...response.headers,
    'content-length': bodyLength(body),
  };
  if (!req.complete) {
    headers.connection = 'close';
    lingerAfterAnswer(req, res);
  }
  res.writeHead(response.status, headers);
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    res.end(body);
    return;
  }
  // Pieces are written as they are, corked so they leave in one write, never joined.
  res.cork();
  for (const piece of body) res.write(piece);
  res.end();
  res.uncork();
}

/**
 * 'finish' means the last byte was handed to the socket, except that node also emits it
 * when a write fails because the client went away; then the socket is already destroyed. A 'close' before 'finish' means the bytes never were handed over.
 */
function reportWritten(res: ServerResponse, onWritten: (ok: boolean) => void): void {
  let reported = false;
  const report = (ok: boolean) => {
    if (reported) return;
    reported = true;
    onWritten(ok);
  };
  // The response detaches from its socket before 'finish' listeners run: keep it now. An
  // answer to a pipelined request has no socket yet while earlier answers on its connection
  // are still being written; node hands it the socket later ('socket'), and its 'finish'
  // follows that. Reading the socket only now would call every such answer undelivered,
  // and its messages would be handed out again although the client got them.
  let socket = res.socket;
  if (socket === null) res.once('socket', (assigned) => (socket = assigned));
  res.once('finish', () => report(socket !== null && !socket.destroyed && !socket.errored));
  res.once('close', () => report(res.writableFinished));
  res.once('error', () => report(false));
}

/** The fallback engine: node:http, for platforms where no uWebSockets.js build loads. */
export function createNodeEngine(): HttpEngine {
  return {
    name: 'node',
    build: `node:http (Node.js ${process.version})`,
    listen({ host, port, maxBodyBytes, clientAddressOf }, handler: RequestHandler) {
      const server = createServer((req, res) => {
        const controller = new AbortController();
        res.on('close', () => {
          if (!res.writableFinished) controller.abort();
        });
        let body: Promise<BodyResult> | undefined;
        const context = {
          head: headOf(req, clientAddressOf),
          readBody: () => {
            body ??= collectBody(req, maxBodyBytes);
            return body;
          },
          signal: controller.signal,
        };
        handler(context).then(
          (response) => send(req, res, response),
          () =>
            send(req, res, {
              status: 500,
              headers: { 'content-type': 'application/json' },
              body: '{"error":"internal error"}',
            }),
        );
      });
      server.keepAliveTimeout = 65_000;
      return new Promise((resolve, reject) => {
        server.once('error', (error: NodeJS.ErrnoException) =>
          reject(error.code === 'EADDRINUSE' ? portInUseError(host, port) : error),
        );
        server.listen(port, host, () => {
          server.removeAllListeners('error');
          const closed = new Promise<void>((done) => server.once('close', () => done()));
          let accepting = true;
          const stopAccepting = () => {
            if (!accepting) return;
            accepting = false;
            server.close();
            server.closeIdleConnections();
          };
          resolve({
            port: (server.address() as AddressInfo).port,
            stopAccepting,
            close: async () => {
              stopAccepting();
              server.closeAllConnections();
              await closed;
            },
          });
        });
      });
    },
  };
}
