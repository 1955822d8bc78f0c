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
  /**
   * Send the status and headers, then until the client goes away: `silence` (no body),
   * `half` (the first half of `body`, then nothing) or `trickle` (a space every 50 ms).
   */
  stall?: 'silence' | 'half' | 'trickle';
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
  /** Resolves once the client has gone away from every hung or stalled answer. */
  released(): Promise<void>;
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
  const holding = new Holding();
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
      if (fault.hang || fault.stall) {
        holding.hold(fault, raw, res);
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
    released: () => holding.released(),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The answers held open by `hang` and `stall` faults, until each client goes away. */
class Holding {
  private open = 0;
  private readonly waiting: Array<() => void> = [];

  hold(fault: Fault, raw: IncomingMessage, res: ServerResponse): void {
    // A request read after its client gave up: there is nothing left to hold.
    if (raw.socket.destroyed) return;
    this.open++;
    let trickle: NodeJS.Timeout | undefined;
    if (fault.stall) {
      res.writeHead(fault.status ?? 200, { 'content-type': 'application/json', ...fault.headers });
      res.flushHeaders();
      const body = fault.body ?? '{}';
      if (fault.stall === 'half') res.write(body.slice(0, Math.ceil(body.length / 2)));
      if (fault.stall === 'trickle') trickle = setInterval(() => res.write(' '), 50);
    }
    raw.socket.once('close', () => {
      clearInterval(trickle);
      res.destroy();
      if (--this.open === 0) for (const wake of this.waiting.splice(0)) wake();
    });
  }

  released(): Promise<void> {
    return this.open === 0 ? Promise.resolve() : new Promise((resolve) => this.waiting.push(resolve));
  }
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
