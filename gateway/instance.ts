/** One gateway listener with its own broker-worker link: what the main thread and each extra thread run. */
import type { Logger } from 'pino';
import { BrokerWorkerClient } from './broker-client/index.ts';
import type { GatewayConfig } from './config.ts';
import { type RunningGateway, startGateway } from './server.ts';

export interface GatewayInstance {
  gateway: RunningGateway;
  close(): Promise<void>;
}

export async function startGatewayInstance(config: GatewayConfig, log: Logger): Promise<GatewayInstance> {
  const broker = BrokerWorkerClient.fromEnv(process.env);
  try {
    const gateway = await startGateway({ config, log, broker });
    return {
      gateway,
      async close() {
        await gateway.close();
        await broker.close();
      },
    };
  } catch (error) {
    await broker.close();
    throw error;
  }
}
