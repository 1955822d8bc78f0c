import type {
  BodyResult,
  HttpEngine,
  HttpResponse,
  RequestContext,
  RequestHandler,
  RequestHead,
} from './engine.ts';
import { statusLine } from './engine.ts';
import type { LoadedUws, UwsRequest, UwsResponse } from './uws-loader.ts';

// uWS invalidates the request object when the handler returns, so everything is copied first.
function headOf(req: UwsRequest, res: UwsResponse): RequestHead {
  const headers: Record<string, string> = {};
  req.forEach((name, value) => {
    const previous = headers[name];
    headers[name] = previous === undefined ? value : `${previous}, ${value}`;
  });
  return {
    method: req.getMethod().toUpperCase(),
    path: req.getUrl(),
    query: req.getQuery() ?? '',
    headers,
    remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString(),
  };
}

/**
 * uWS delivers the body only to an onData handler attached before the route handler
 * returns, so the body is buffered eagerly. Buffering stops as soon as a response is
 * written (a refused caller's upload is never kept), and a body past the limit, declared
 * or actual, is reported at once without being stored.
 */
function bufferBody(
  res: UwsResponse,
  head: RequestHead,
  maxBodyBytes: number,
  answered: () => boolean,
): Promise<BodyResult> {
  const declaredLength = head.headers['content-length'];
  const declaresBody = declaredLength !== undefined || head.headers['transfer-encoding'] !== undefined;
  return new Promise((resolve) => {
    if (!declaresBody || declaredLength === '0') {
      resolve({ ok: true, body: Buffer.alloc(0) });
    }
    if (declaredLength !== undefined && Number(declaredLength) > maxBodyBytes) {
      resolve({ ok: false, reason: 'too-large' });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    res.onData((chunk, isLast) => {
      if (done) return;
      if (answered()) {
        done = true;
        chunks.length = 0;
        return;
      }
      size += chunk.byteLength;
      if (size > maxBodyBytes) {
        done = true;
        chunks.length = 0;
        resolve({ ok: false, reason: 'too-large' });
        return;
      }
      // The ArrayBuffer is reused by uWS after this callback: copy it.
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) {
        done = true;
        resolve({ ok: true, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
      }
    });
  });
}

export function createUwsEngine({ uws, build }: LoadedUws): HttpEngine {
  return {
    name: 'uws',
    build,
    listen({ host, port, maxBodyBytes }, handler: RequestHandler) {
      const app = uws.App();
      app.any('/*', (res, req) => {
        const head = headOf(req, res);
        // Most requests never look at the signal; an AbortController is made only for those that do.
        let controller: AbortController | undefined;
        let finished = false;
        res.onAborted(() => {
          finished = true;
          controller?.abort();
        });
        const body = bufferBody(res, head, maxBodyBytes, () => finished);
        const context: RequestContext = {
          head,
          readBody: () => body,
          get signal() {
            controller ??= new AbortController();
            if (finished) controller.abort();
            return controller.signal;
          },
        };
        handler(context)
          .catch(
            (): HttpResponse => ({
              status: 500,
              headers: { 'content-type': 'application/json' },
              body: '{"error":"internal error"}',
            }),
          )
          .then((response) => {
            if (finished) return;
            finished = true;
            res.cork(() => {
              res.writeStatus(statusLine(response.status));
              for (const [name, value] of Object.entries(response.headers ?? {}))
                res.writeHeader(name, value);
              // A refused oversized upload is still streaming in: close rather than read it.
              const close = response.status === 413;
              if (head.method === 'HEAD') res.endWithoutBody(Buffer.byteLength(response.body ?? ''), close);
              else res.end(response.body ?? '', close);
            });
          });
      });
      return new Promise((resolve, reject) => {
        app.listen(host, port, (socket) => {
          if (!socket) {
            reject(
              new Error(
                `uWebSockets.js could not listen on ${host}:${port} (address in use or not permitted)`,
              ),
            );
            return;
          }
          resolve({
            port: uws.us_socket_local_port(socket),
            close: async () => {
              uws.us_listen_socket_close(socket);
              app.close?.();
            },
          });
        });
      });
    },
  };
}
