/**
 * `npm run broker-worker`: the long-lived process that owns every Kafka connection. The
 * gateway reaches it over IPC (see shared/ipc/). Settings are read once here; a bad value
 * stops the process with a message naming the variable, a missing broker does not.
 */
import { SettingsError } from '../shared/broker-settings.ts';
import { startTracing } from '../shared/tracing.ts';
import { IpcServer } from './ipc/server.ts';
import { createLogger } from './logger.ts';
import { WorkerMetrics } from './metrics.ts';
import { BrokerService } from './service.ts';
import { loadWorkerSettings, type WorkerSettings } from './settings.ts';

/** Running calls get this long to answer at shutdown before consumers leave their groups. */
const DRAIN_MS = 10_000;

function loadSettingsOrExit(): WorkerSettings {
  try {
    return loadWorkerSettings();
  } catch (error) {
    if (error instanceof SettingsError) {
      process.stderr.write(`broker-worker: invalid setting ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

async function main(): Promise<void> {
  const settings = loadSettingsOrExit();
  const logger = createLogger(settings.logLevel, settings.workerId);
  const service = new BrokerService(settings, logger);
  if (!service.configured) {
    logger.warn(
      { missingSettings: service.missingSettings },
      'broker not configured: every call except status answers NOT_CONFIGURED',
    );
  }

  const server = new IpcServer({
    endpoint: settings.listen,
    workerId: settings.workerId,
    dispatch: service.dispatch,
    logger,
    selfTimed: new Set(['consume']),
    token: settings.token,
    deadlineError: service.deadlineError,
  });
  service.metrics = new WorkerMetrics(
    () => server.inFlight,
    service.configured ? () => service.health.reachable : undefined,
  );
  const tracing = await startTracing(process.env, 'mcp-broker-worker', (line) => logger.info(line));
  service.tracer = tracing?.tracer ?? null;
  try {
    await server.listen();
  } catch (error) {
    logger.fatal({ err: (error as Error).message, listen: server.address }, 'cannot listen for the gateway');
    process.exit(1);
  }
  logger.info(
    {
      listen: server.address,
      port: server.boundPort,
      configured: service.configured,
      bootstrap: settings.broker.bootstrapServers,
      securityProtocol: settings.broker.securityProtocol,
    },
    'broker worker listening',
  );

  service.startProbe();

  // A stray rejection inside a client library must not take down every warm consumer.
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason instanceof Error ? reason.message : String(reason) }, 'unhandled rejection');
  });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal, inFlight: server.inFlight }, 'shutting down');
    // Group consumers answer their polls at once (committing what they hand out) and leave
    // their groups, while other calls get DRAIN_MS to finish; then the producer and the
    // rest close.
    await Promise.all([service.closeConsumers(), server.drain(DRAIN_MS)]);
    await service.close();
    await server.close();
    const unsent = await tracing?.shutdown();
    if (unsent) logger.warn(`stopping without the last spans: ${unsent}`);
    logger.info('stopped');
    logger.flush?.();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // Under `npm start` the supervisor holds an IPC channel: tell it we are up, and stop if it goes away.
  if (process.send) {
    process.send('ready');
    process.on('disconnect', () => void shutdown('supervisor gone'));
  }
}

await main();
