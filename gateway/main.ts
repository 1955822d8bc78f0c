/** The gateway process: validated configuration, then one listener per thread, each with its broker-worker link. */
import { type GatewayConfig, loadGatewayConfig } from './config.ts';
import { type GatewayInstance, startGatewayInstance } from './instance.ts';
import { type ListenerThreads, startListenerThreads } from './listener-threads.ts';
import { createLogger } from './logger.ts';

function configurationOrExit(): GatewayConfig {
  try {
    return loadGatewayConfig();
  } catch (error) {
    console.error(`gateway: ${(error as Error).message}`);
    process.exit(1);
  }
}

const config = configurationOrExit();
const log = createLogger(config.LOG_LEVEL);
let instance: GatewayInstance;
let threads: ListenerThreads | null = null;
try {
  instance = await startGatewayInstance(config, log);
  if (config.GATEWAY_THREADS > 1) {
    if (instance.gateway.engine !== 'uws') {
      log.warn(
        'GATEWAY_THREADS needs the uWS engine (node:http cannot share a port across threads); serving from one thread',
      );
    } else if (config.PORT === 0) {
      log.warn('GATEWAY_THREADS needs a fixed PORT; serving from one thread');
    } else {
      threads = await startListenerThreads(config.GATEWAY_THREADS - 1, log);
    }
  }
} catch (error) {
  log.fatal({ err: error }, `gateway could not start: ${(error as Error).message}`);
  process.exit(1);
}

let stopping = false;
async function stop(reason: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ reason }, 'gateway stopping: draining requests in flight');
  await Promise.all([threads?.stop(), instance.close()]);
  log.info('gateway stopped');
  process.exit(0);
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void stop(signal));
// Under `npm start` the supervisor holds an IPC channel: tell it we are up, and stop if it goes away.
if (process.send) {
  process.send('ready');
  process.on('disconnect', () => void stop('supervisor gone'));
}
