/** The gateway process: validated configuration, the broker-worker link, then the listener. */
import { BrokerWorkerClient } from './broker-client/index.ts';
import { loadGatewayConfig } from './config.ts';
import { createLogger } from './logger.ts';
import { startGateway } from './server.ts';

function configurationOrExit() {
  try {
    const config = loadGatewayConfig();
    return { config, broker: BrokerWorkerClient.fromEnv(process.env) };
  } catch (error) {
    console.error(`gateway: ${(error as Error).message}`);
    process.exit(1);
  }
}

const { config, broker } = configurationOrExit();
const log = createLogger(config.LOG_LEVEL);
const gateway = await startGateway({ config, log, broker }).catch((error: Error) => {
  log.fatal({ err: error }, `gateway could not start: ${error.message}`);
  process.exit(1);
});

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'gateway stopping');
    await gateway.close();
    await broker.close();
    process.exit(0);
  });
}
