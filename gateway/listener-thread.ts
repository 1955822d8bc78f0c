/**
 * An extra listener thread (GATEWAY_THREADS > 1). uWS lets an App in every thread listen
 * on the same port and the kernel spreads connections over them. The thread stops only
 * when asked, after closing its listener: a thread that exits with the listener open
 * takes the whole process down.
 *
 * Metrics and audit lines go to the main thread, which owns the ops listener and the one
 * audit file: a scrape then covers every thread, and a SIGHUP (which only the main thread
 * hears) reopens the one file every line goes through.
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { loadGatewayConfig } from './config.ts';
import { startGatewayInstance } from './instance.ts';
import type { ThreadMessage } from './listener-threads.ts';
import { createLogger } from './logger.ts';

const config = loadGatewayConfig();
const log = createLogger(config.LOG_LEVEL, undefined, 'gateway', {
  pretty: Boolean((workerData as { prettyLogs?: boolean } | undefined)?.prettyLogs),
}).child({ thread: threadId });
// prom-client loads only when METRICS_PORT is set (as in main.ts).
const metrics =
  config.METRICS_PORT === undefined
    ? undefined
    : new (await import('./ops/metrics.ts')).GatewayMetrics({ processMetrics: false });
const post = (message: ThreadMessage) => parentPort?.postMessage(message);
const instance = await startGatewayInstance(config, log, {
  sharedPort: true,
  ...(metrics ? { metrics } : {}),
  ...(config.auditTarget ? { audit: (line: string) => post({ t: 'audit', line }) } : {}),
});
post({ t: 'ready', port: instance.gateway.port });
parentPort?.on('message', async (message: 'stop' | { t: 'metrics'; id: number }) => {
  if (message === 'stop') {
    await instance.close();
    parentPort?.close();
    return;
  }
  if (message.t === 'metrics') {
    post({ t: 'metrics', id: message.id, data: metrics ? await metrics.registry.getMetricsAsJSON() : [] });
  }
});
