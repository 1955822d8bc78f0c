/** One gateway listener with its own broker-worker link: what the main thread and each extra thread run. */
import type { Logger } from 'pino';
import { startTracing } from '../shared/tracing.ts';
import { BrokerWorkerClient } from './broker-client/index.ts';
import type { GatewayConfig } from './config.ts';
import type { GatewayMetrics } from './ops/metrics.ts';
import { type RunningGateway, startGateway } from './server.ts';

export interface GatewayInstance {
  gateway: RunningGateway;
  broker: BrokerWorkerClient;
  /** Drains (see drainAndClose) and closes. */
  close(): Promise<void>;
}

/** Longest a stopping gateway waits for its requests in flight before it cuts them. */
export const DRAIN_MS = 10_000;

export async function startGatewayInstance(
  config: GatewayConfig,
  log: Logger,
  options: { sharedPort?: boolean; metrics?: GatewayMetrics; audit?: (line: string) => void } = {},
): Promise<GatewayInstance> {
  const broker = BrokerWorkerClient.fromEnv(process.env);
  const tracing = await startTracing(process.env, 'mcp-gateway', (line) => log.info(line));
  try {
    const gateway = await startGateway({
      config,
      log,
      broker,
      sharedPort: options.sharedPort ?? false,
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.audit ? { audit: options.audit } : {}),
      ...(tracing ? { tracer: tracing.tracer } : {}),
    });
    return {
      gateway,
      broker,
      async close() {
        // Stop accepting, answer the long polls at once, let every other call finish.
        const drained = gateway.drain(DRAIN_MS, config.DRAIN_GRACE_MS ?? 0);
        broker.endPolls();
        if (!(await drained))
          log.warn({ waitedMs: DRAIN_MS }, 'requests still in flight at shutdown were cut');
        await gateway.close();
        await broker.close();
        const unsent = await tracing?.shutdown();
        if (unsent) log.warn(`stopping without the last spans: ${unsent}`);
      },
    };
  } catch (error) {
    await broker.close();
    await tracing?.shutdown();
    throw error;
  }
}
