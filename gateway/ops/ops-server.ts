/**
 * The ops listener (METRICS_PORT, METRICS_HOST): GET /metrics and GET /readyz, apart from
 * the public port so neither is reachable where agents connect, and so a scrape never
 * waits behind MCP traffic. Plain node:http: a scrape every few seconds needs no uWS.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { ReadinessReport } from './readiness.ts';

export interface OpsSources {
  /** The Prometheus text of every thread and broker worker together. */
  metrics(): Promise<{ contentType: string; text: string }>;
  readiness(): Promise<ReadinessReport>;
}

export interface OpsListener {
  port: number;
  close(): Promise<void>;
}

export async function startOpsListener(
  host: string,
  port: number,
  sources: OpsSources,
  log: Logger,
): Promise<OpsListener> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const answer = (status: number, contentType: string, body: string) => {
      response.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      answer(405, 'text/plain', 'Use GET.\n');
      return;
    }
    if (path === '/metrics') {
      sources.metrics().then(
        ({ contentType, text }) => answer(200, contentType, text),
        (error: Error) => {
          log.error({ err: error }, 'metrics scrape failed');
          answer(500, 'text/plain', `metrics could not be collected: ${error.message}\n`);
        },
      );
      return;
    }
    if (path === '/readyz') {
      sources
        .readiness()
        .then((report) => answer(report.ready ? 200 : 503, 'application/json', JSON.stringify(report)));
      return;
    }
    answer(404, 'text/plain', 'The ops listener serves GET /metrics and GET /readyz.\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  log.info({ host, port: bound }, `ops listener on http://${host}:${bound} (GET /metrics, GET /readyz)`);
  return {
    port: bound,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
