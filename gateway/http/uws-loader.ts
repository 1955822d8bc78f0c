import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** The parts of the uWebSockets.js API the engine uses; both republished builds share it. */
export interface UwsModule {
  App(): UwsApp;
  us_listen_socket_close(socket: unknown): void;
  us_socket_local_port(socket: unknown): number;
}
export interface UwsApp {
  any(pattern: string, handler: (res: UwsResponse, req: UwsRequest) => void): UwsApp;
  listen(host: string, port: number, cb: (socket: unknown) => void): UwsApp;
  close?(): void;
}
export interface UwsRequest {
  getMethod(): string;
  getUrl(): string;
  getQuery(): string | undefined;
  forEach(cb: (name: string, value: string) => void): void;
  /** The value of a header by its lower-case name; empty when absent. */
  getHeader(name: string): string;
}
export interface UwsResponse {
  onAborted(cb: () => void): UwsResponse;
  onData(cb: (chunk: ArrayBuffer, isLast: boolean) => void): UwsResponse;
  cork(cb: () => void): UwsResponse;
  writeStatus(status: string): UwsResponse;
  writeHeader(name: string, value: string): UwsResponse;
  end(body?: string | Buffer, closeConnection?: boolean): UwsResponse;
  /** Cuts the connection at once. */
  close(): UwsResponse;
  /** Writes part of a chunked response; the response stays open until end(). */
  write(chunk: string | Buffer): boolean;
  endWithoutBody(reportedContentLength?: number, closeConnection?: boolean): UwsResponse;
  /** Writes what the socket takes now: [ok (no backpressure), done (whole body written)]. */
  tryEnd(body: string | Buffer, totalSize: number): [boolean, boolean];
  getWriteOffset(): number;
  onWritable(cb: (offset: number) => boolean): UwsResponse;
  getRemoteAddressAsText(): ArrayBuffer;
}

export interface LoadedUws {
  uws: UwsModule;
  build: string;
}

function packageVersion(name: string): string {
  return (require(`${name}/package.json`) as { version: string }).version;
}

/**
 * Each candidate loads its native binary directly. The trufflesuite package, asked the
 * usual way, silently swaps in a slow JavaScript imitation when its binary does not match
 * the Node ABI; loading the binary ourselves turns that into a clean fallback to node:http.
 */
const candidates: Array<{ name: string; load(): UwsModule }> = [
  {
    name: '@trufflesuite/uws-js-unofficial',
    load() {
      const root = dirname(require.resolve('@trufflesuite/uws-js-unofficial/package.json'));
      const binary = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
      return require(join(root, 'binaries', binary)) as UwsModule;
    },
  },
  {
    name: '@btc-vision/uwebsockets.js',
    load: () => require('@btc-vision/uwebsockets.js') as UwsModule,
  },
];

/** The first uWebSockets.js build that loads here, and why each one before it did not. */
export function loadUws(): { loaded: LoadedUws | null; failures: string[] } {
  const failures: string[] = [];
  for (const candidate of candidates) {
    try {
      const uws = candidate.load();
      if (typeof uws.App !== 'function') throw new Error('module has no App()');
      return { loaded: { uws, build: `${candidate.name}@${packageVersion(candidate.name)}` }, failures };
    } catch (error) {
      failures.push(`${candidate.name}: ${(error as Error).message.split('\n')[0]}`);
    }
  }
  return { loaded: null, failures };
}
