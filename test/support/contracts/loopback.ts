/**
 * A real node:http server on 127.0.0.1:0 for contract servers: records every request (secret
 * headers dropped) and plays a fault script before the normal handler.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface Fault {
  /** `METHOD /path-prefix`, or just a path prefix. */
  match: string;
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Hold the answer until the client goes away. */
  hang?: boolean;
  /** Close the socket without answering. */
  reset?: boolean;
  /** How many times this fault fires (default 1). */
  times?: number;
}

export type Handler = (
  req: RecordedRequest,
  res: ServerResponse,
  raw: IncomingMessage,
) => void | Promise<void>;

export interface LoopbackServer {
  url: string;
  requests: RecordedRequest[];
  faults: Fault[];
  /** Requests whose method and path start with `match`. */
  count(match: string): number;
  close(): Promise<void>;
}

function matches(match: string, req: RecordedRequest): boolean {
  const [first, second] = match.split(' ');
  if (second === undefined) return req.path.startsWith(first ?? '');
  return req.method === first && req.path.startsWith(second);
}

export async function startLoopback(handler: Handler): Promise<LoopbackServer> {
  const requests: RecordedRequest[] = [];
  const faults: Fault[] = [];
  const server: Server = createServer(async (raw, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of raw) chunks.push(chunk as Buffer);
    const req: RecordedRequest = {
      method: raw.method ?? 'GET',
      path: raw.url ?? '/',
      headers: { ...raw.headers },
      body: Buffer.concat(chunks).toString('utf8'),
    };
    requests.push({ ...req, headers: { ...raw.headers, authorization: undefined } });
    const fault = faults.find((f) => (f.times ?? 1) > 0 && matches(f.match, req));
    if (fault) {
      fault.times = (fault.times ?? 1) - 1;
      if (fault.reset) {
        raw.socket.destroy();
        return;
      }
      if (fault.hang) {
        raw.socket.once('close', () => res.destroy());
        return;
      }
      res.writeHead(fault.status ?? 500, { 'content-type': 'application/json', ...fault.headers });
      res.end(fault.body ?? '{}');
      return;
    }
    try {
      await handler(req, res, raw);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(error) }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    faults,
    count: (match) => requests.filter((req) => matches(match, req)).length,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
