/**
 * An extra listener thread (GATEWAY_THREADS > 1). uWS lets an App in every thread listen
 * on the same port and the kernel spreads connections over them. The thread stops only
 * when asked, after closing its listener: a thread that exits with the listener open
 * takes the whole process down.
 */
import { parentPort, threadId } from 'node:worker_threads';
import { loadGatewayConfig } from './config.ts';
import { startGatewayInstance } from './instance.ts';
import { createLogger } from './logger.ts';

const config = loadGatewayConfig();
const log = createLogger(config.LOG_LEVEL).child({ thread: threadId });
const instance = await startGatewayInstance(config, log, { sharedPort: true });
parentPort?.postMessage({ ready: true, port: instance.gateway.port });
parentPort?.on('message', async (message) => {
  if (message !== 'stop') return;
  await instance.close();
  parentPort?.close();
});
