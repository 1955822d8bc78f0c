/**
 * Where a broker worker listens, written as `unix:/path/to.sock` or `tcp:host:port`.
 * The worker's BROKER_WORKER_LISTEN and each entry of the gateway's BROKER_WORKERS use
 * this one syntax, so the same string configures both ends.
 */
import { isAbsolute, join, resolve } from 'node:path';

export type WorkerEndpoint = { kind: 'unix'; path: string } | { kind: 'tcp'; host: string; port: number };

/** Linux's sockaddr_un holds 108 bytes including the terminating NUL. */
const UNIX_PATH_MAX = 107;

export const DEFAULT_SOCKET_NAME = 'broker-worker.sock';

/** `unix:<DATA_DIR>/broker-worker.sock`, the address both ends use when nothing else is set. */
export function defaultEndpoint(dataDir = process.env.DATA_DIR || './data'): WorkerEndpoint {
  return { kind: 'unix', path: resolve(join(dataDir, DEFAULT_SOCKET_NAME)) };
}

/** Parses one address; throws an Error whose message says what form is expected. */
export function parseEndpoint(text: string): WorkerEndpoint {
  const value = text.trim();
  if (value.startsWith('unix:')) {
    const raw = value.slice('unix:'.length);
    if (raw.length === 0)
      throw new Error(`"${text}" has no socket path; write unix:/path/to/broker-worker.sock`);
    const path = isAbsolute(raw) ? raw : resolve(raw);
    if (Buffer.byteLength(path) > UNIX_PATH_MAX) {
      throw new Error(
        `unix socket path "${path}" is longer than ${UNIX_PATH_MAX} bytes; use a shorter DATA_DIR`,
      );
    }
    return { kind: 'unix', path };
  }
  if (value.startsWith('tcp:')) {
    const rest = value.slice('tcp:'.length).replace(/^\/\//, '');
    const colon = rest.lastIndexOf(':');
    const host = rest.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
    const port = Number(rest.slice(colon + 1));
    if (colon <= 0 || host.length === 0 || !Number.isInteger(port) || port < 0 || port > 65_535) {
      throw new Error(`"${text}" is not tcp:host:port (for example tcp:127.0.0.1:7070)`);
    }
    return { kind: 'tcp', host, port };
  }
  throw new Error(`"${text}" must start with unix: or tcp: (for example unix:./data/broker-worker.sock)`);
}

/** Comma-separated list, in order; duplicates are refused because they would skew routing. */
export function parseEndpointList(text: string): WorkerEndpoint[] {
  const endpoints = text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map(parseEndpoint);
  if (endpoints.length === 0) throw new Error('the list is empty');
  const seen = new Set<string>();
  for (const endpoint of endpoints) {
    const label = formatEndpoint(endpoint);
    if (seen.has(label)) throw new Error(`${label} is listed twice`);
    seen.add(label);
  }
  return endpoints;
}

export function formatEndpoint(endpoint: WorkerEndpoint): string {
  if (endpoint.kind === 'unix') return `unix:${endpoint.path}`;
  const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
  return `tcp:${host}:${endpoint.port}`;
}
