/**
 * Raw MCP over HTTP for the HTTP-contract and protocol-era tests: node:http requests with
 * headers exactly as given, the 2026-07-28 envelope and routing headers, a broker that
 * records calls, and one gateway per engine's describe block.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before } from 'node:test';
import type { BrokerCalls } from '../../gateway/namespaces/event/broker-calls.ts';
import { startTestGateway, type TestGateway } from './gateway.ts';

/** What the HTTP-contract files configure: one allowed origin, 4 KiB bodies, no key cache. */
export const CONTRACT_ENV = {
  MCP_ALLOWED_ORIGINS: 'https://allowed.example',
  MCP_MAX_BODY_BYTES: '4096',
  API_KEY_CACHE_TTL_MS: '0',
};

/**
 * A gateway on `engine` for the enclosing describe block: started before its tests (and
 * checked to run that engine), closed after them; `use` receives it once started.
 */
export function gatewayForBlock(
  options: { engine: 'uws' | 'node'; broker: BrokerCalls; env?: Record<string, string> },
  use: (gw: TestGateway) => void,
): void {
  let started: TestGateway | undefined;
  before(async () => {
    started = await startTestGateway(options);
    assert.equal(started.gateway.engine, options.engine);
    use(started);
  });
  after(() => started?.close());
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies are probed field by field.
  body: any;
}

export const BASE = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
export const PV = '2026-07-28';
export const META = {
  'io.modelcontextprotocol/protocolVersion': PV,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '0' },
};

/** node:http sends header names as spelled, and a name given several values as several lines. */
export function post(
  gw: TestGateway,
  headers: Array<[string, string]>,
  body: string,
  path = '/event/mcp',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const lines: Record<string, string[]> = {};
    for (const [name, value] of headers) {
      lines[name] ??= [];
      lines[name].push(value);
    }
    const req = request(
      { host: '127.0.0.1', port: gw.port, method: 'POST', path, headers: lines, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export function base(gw: TestGateway): Array<[string, string]> {
  return [...Object.entries(BASE), ['x-api-key', gw.apiKey]];
}

/** A modern request: the envelope in the body and the matching routing headers, with overrides. */
export function modern(
  gw: TestGateway,
  id: number | string,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string | null> = {},
): Promise<Answer> {
  const routing: Record<string, string | null> = {
    'MCP-Protocol-Version': PV,
    'Mcp-Method': method,
    ...(typeof params.name === 'string' ? { 'Mcp-Name': params.name } : {}),
    ...headers,
  };
  const sent = Object.entries(routing).filter((entry): entry is [string, string] => entry[1] !== null);
  return post(
    gw,
    [...base(gw), ...sent],
    JSON.stringify({ jsonrpc: '2.0', id, method, params: { _meta: META, ...params } }),
  );
}

export function legacy(
  gw: TestGateway,
  message: unknown,
  headers: Array<[string, string]> = [],
): Promise<Answer> {
  return post(gw, [...base(gw), ...headers], JSON.stringify(message));
}

export function assertError(answer: Answer, status: number, code: number, id: unknown): void {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.body?.error?.code, code, answer.text);
  assert.equal(answer.body?.id, id, answer.text);
  assert.equal(typeof answer.body?.error?.message, 'string');
}

/** Records the broker calls the tools make; a call to `slow` waits until its signal aborts. */
export function recordingBroker(): BrokerCalls & { calls: string[]; aborted: string[] } {
  const calls: string[] = [];
  const aborted: string[] = [];
  return {
    calls,
    aborted,
    call(method, _params, options) {
      calls.push(method);
      if (method === 'topics') {
        return new Promise((_resolve, reject) => {
          options.signal?.addEventListener('abort', () => {
            aborted.push(method);
            reject(Object.assign(new Error('cancelled'), { code: 'CANCELLED' }));
          });
        });
      }
      return Promise.reject(
        Object.assign(new Error('The broker worker is unreachable.'), { code: 'WORKER_UNREACHABLE' }),
      );
    },
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http's client, because fetch normalises the paths these tests must send verbatim. */
export function raw(
  gw: TestGateway,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: gw.port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString(),
        }),
      );
    });
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

export const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

export function rpc(
  gw: TestGateway,
  message: unknown,
  headers: Record<string, string> = {},
  key = gw.apiKey,
) {
  return raw(
    gw,
    'POST',
    '/event/mcp',
    { ...MCP_HEADERS, 'x-api-key': key, ...headers },
    JSON.stringify(message),
  );
}
