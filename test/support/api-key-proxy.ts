/**
 * A loopback reverse proxy that adds `X-API-Key` to every request and forwards it to a
 * gateway, for third-party clients (like the MCP conformance suite) that cannot send custom
 * headers. Everything else passes through untouched: method, path exactly as sent, all
 * request headers including Host and Origin, the body as a stream, and the upstream status,
 * headers and body.
 *
 * With `record`, it also keeps what crossed it (request headers and body, the answer's
 * status, headers and body): a witness of the wire that neither the client nor the gateway wrote.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Connection-scoped headers: each hop manages its own connection, so these are not passed on. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection']);

/** Raw headers (duplicates, order and case as sent) minus hop-by-hop ones and any named in `drop`. */
function passHeaders(raw: string[], drop: string[] = []): string[] {
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!HOP_BY_HOP.has(name) && !drop.includes(name)) kept.push(raw[i]!, raw[i + 1]!);
  }
  return kept;
}

/** Raw header lines by lower-case name, every line kept (a repeated header has several values). */
function headerLines(raw: string[]): Record<string, string[]> {
  const lines: Record<string, string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    lines[name] = [...(lines[name] ?? []), raw[i + 1]!];
  }
  return lines;
}

export interface ProxyTarget {
  /** Gateway base URL, e.g. http://127.0.0.1:1234 */
  url: string;
  /** Replaces any X-API-Key the client sent; undefined passes the client's own key on untouched. */
  apiKey?: string;
}

/** One request that crossed the proxy, recorded once its answer ended. */
export interface ProxiedExchange {
  method: string;
  path: string;
  /** As the client sent them (before the proxy's own X-API-Key), by lower-case name. */
  requestHeaders: Record<string, string[]>;
  requestBody: Buffer;
  status: number;
  responseHeaders: Record<string, string[]>;
  responseBody: Buffer;
}

export interface ApiKeyProxy {
  /** The proxy's base URL, http://127.0.0.1:<port> */
  url: string;
  port: number;
  /** Every exchange so far, in the order their answers ended; empty unless started with `record`. */
  exchanges: ProxiedExchange[];
  close(): Promise<void>;
}

/**
 * Starts the proxy on a free loopback port. The target is read per request, so the proxy can
 * be started before the gateway (whose configuration may need to know the proxy's origin).
 */
export async function startApiKeyProxy(
  target: () => ProxyTarget,
  options: { record?: boolean } = {},
): Promise<ApiKeyProxy> {
  const exchanges: ProxiedExchange[] = [];
  const server = createServer((req, res) => {
    const { url, apiKey } = target();
    const upstreamUrl = new URL(url);
    // Host and Origin pass through as the client sent them; a configured key replaces the client's.
    const headers =
      apiKey === undefined
        ? passHeaders(req.rawHeaders)
        : [...passHeaders(req.rawHeaders, ['x-api-key']), 'X-API-Key', apiKey];
    const requestChunks: Buffer[] = [];
    if (options.record) req.on('data', (chunk: Buffer) => requestChunks.push(chunk));
    const upstream = request(
      {
        host: upstreamUrl.hostname,
        port: upstreamUrl.port,
        method: req.method,
        path: req.url,
        headers,
        // One upstream connection per request keeps a client's reuse pattern out of the picture.
        agent: false,
      },
      (upstreamRes) => {
        res.writeHead(
          upstreamRes.statusCode ?? 502,
          upstreamRes.statusMessage,
          passHeaders(upstreamRes.rawHeaders),
        );
        upstreamRes.pipe(res);
        upstreamRes.on('error', () => res.destroy());
        if (options.record) {
          const responseChunks: Buffer[] = [];
          upstreamRes.on('data', (chunk: Buffer) => responseChunks.push(chunk));
          upstreamRes.on('end', () =>
            exchanges.push({
              method: req.method ?? '',
              path: req.url ?? '',
              requestHeaders: headerLines(req.rawHeaders),
              requestBody: Buffer.concat(requestChunks),
              status: upstreamRes.statusCode ?? 0,
              responseHeaders: headerLines(upstreamRes.rawHeaders),
              responseBody: Buffer.concat(responseChunks),
            }),
          );
        }
      },
    );
    upstream.on('error', (error) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`api-key proxy: upstream ${url} failed: ${error.message}`);
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
