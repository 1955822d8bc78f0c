/** The gateway process: validated configuration, then one listener per thread, each with its broker-worker link. */
import { type GatewayConfig, loadGatewayConfig } from './config.ts';
import { DRAIN_MS, type GatewayInstance, startGatewayInstance } from './instance.ts';
import { type ListenerThreads, startListenerThreads } from './listener-threads.ts';
import { createLogger, wantsPrettyLogs } from './logger.ts';
import { AuditLog, type AuditTarget, auditFileProblem } from './ops/audit.ts';
import type { OpsListener } from './ops/ops-server.ts';

function configurationOrExit(): GatewayConfig {
  try {
    return loadGatewayConfig();
  } catch (error) {
    console.error(`gateway: ${(error as Error).message}`);
    process.exit(1);
  }
}

/** The audit trail, once its file is known to take it; a path that cannot stops the start. */
function auditOrExit(target: AuditTarget | null): AuditLog | undefined {
  if (!target) return undefined;
  const problem = target.kind === 'file' ? auditFileProblem(target.path) : null;
  if (problem) {
    console.error(`gateway: ${problem}`);
    process.exit(1);
  }
  return new AuditLog(target);
}

/** How long a scrape waits for a thread or a broker worker before leaving it out. */
const SCRAPE_PART_TIMEOUT_MS = 2000;

const config = configurationOrExit();
const audit = auditOrExit(config.auditTarget);
const log = createLogger(config.LOG_LEVEL);
// prom-client (about 9 MiB of RSS) loads only when METRICS_PORT asks for a scrape endpoint.
// Default process metrics live in this thread's registry only: they describe the whole process.
const metrics =
  config.METRICS_PORT === undefined
    ? undefined
    : new (await import('./ops/metrics.ts')).GatewayMetrics({ processMetrics: true });
const writeAudit = audit ? (line: string) => audit.write(line) : undefined;
let instance: GatewayInstance;
let threads: ListenerThreads | null = null;
let ops: OpsListener | null = null;
try {
  instance = await startGatewayInstance(config, log, {
    ...(metrics ? { metrics } : {}),
    ...(writeAudit ? { audit: writeAudit } : {}),
  });
  if (config.GATEWAY_THREADS > 1) {
    if (instance.gateway.engine !== 'uws') {
      log.warn(
        'GATEWAY_THREADS needs the uWS engine (node:http cannot share a port across threads); serving from one thread',
      );
    } else if (config.PORT === 0) {
      log.warn('GATEWAY_THREADS needs a fixed PORT; serving from one thread');
    } else {
      threads = await startListenerThreads(config.GATEWAY_THREADS - 1, log, {
        prettyLogs: wantsPrettyLogs(),
        ...(writeAudit ? { onAudit: writeAudit } : {}),
      });
    }
  }
  if (metrics && config.METRICS_PORT !== undefined) {
    const running = instance;
    // node:http, for this listener alone, loads only with it.
    const [{ mergedMetrics }, { startOpsListener }] = await Promise.all([
      import('./ops/scrape.ts'),
      import('./ops/ops-server.ts'),
    ]);
    ops = await startOpsListener(
      config.METRICS_HOST,
      config.METRICS_PORT,
      {
        metrics: () =>
          mergedMetrics([
            metrics.registry.getMetricsAsJSON(),
            ...(threads?.metrics(SCRAPE_PART_TIMEOUT_MS) ?? []),
            ...running.broker.workerMetrics(SCRAPE_PART_TIMEOUT_MS),
          ]),
        readiness: () => running.gateway.readiness(),
      },
      log,
    );
  }
} catch (error) {
  log.fatal({ err: error }, `gateway could not start: ${(error as Error).message}`);
  process.exit(1);
}

// logrotate moves the file, then sends SIGHUP: new lines go to a fresh file at the same path.
if (audit)
  process.on('SIGHUP', () => {
    const problem = audit.reopen();
    if (problem) log.error(`audit log not reopened, lines go on to the file already open: ${problem}`);
  });

/**
 * Past the drain (DRAIN_MS), how long closing may take before the process exits without
 * finishing: closing the stores, the worker links and the ops listener takes milliseconds,
 * and the trace flush is bounded by TRACE_FLUSH_MS.
 */
const CLOSE_MS = 5_000;

/** Runs one closing step; a step that fails is logged and the next still runs. */
async function closing(what: string, step: () => Promise<unknown>): Promise<boolean> {
  try {
    await step();
    return true;
  } catch (error) {
    log.error({ err: (error as Error)?.message ?? String(error) }, `${what} did not close cleanly`);
    return false;
  }
}

let stopping = false;
async function stop(reason: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ reason }, 'gateway stopping: draining requests in flight');
  // Whatever a step waits on, a stop ends: a supervisor that sent SIGTERM gets an exit. Not
  // unref'd: a step stuck on a promise nothing will settle must end here, logged, not as a
  // silent exit 0 once the event loop runs dry.
  setTimeout(() => {
    log.error({ waitedMs: DRAIN_MS + CLOSE_MS }, 'gateway did not finish stopping in time; exiting now');
    process.exit(1);
  }, DRAIN_MS + CLOSE_MS);
  // The ops listener stays up while draining, so a load balancer sees /readyz answer 503.
  const listeners = await closing('the listeners', () => Promise.all([threads?.stop(), instance.close()]));
  const opsClosed = await closing('the ops listener', async () => ops?.close());
  const auditClosed = await closing('the audit log', async () => audit?.close());
  const clean = listeners && opsClosed && auditClosed;
  log.info(clean ? 'gateway stopped' : 'gateway stopped, with the errors above');
  process.exit(clean ? 0 : 1);
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void stop(signal));
/** Longest the gateway waits for /readyz to pass before telling its supervisor it is up anyway. */
const READY_WAIT_MS = 20_000;

/**
 * With the ops listener on, 'ready' means what /readyz means: PM2's wait_ready (and a
 * `pm2 reload`) then hold the old process until the new one can serve. The wait is bounded,
 * so a broker worker that is slow to come up delays the start, never blocks it.
 */
async function waitUntilReady(): Promise<void> {
  if (!ops) return;
  const deadline = Date.now() + READY_WAIT_MS;
  while (Date.now() < deadline && !stopping) {
    if ((await instance.gateway.readiness()).ready) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  log.warn({ waitedMs: READY_WAIT_MS }, 'not ready yet (see GET /readyz); reporting started anyway');
}

// Under `npm start` the supervisor holds an IPC channel: tell it we are up, and stop if it goes away.
if (process.send) {
  await waitUntilReady();
  process.send('ready');
  process.on('disconnect', () => void stop('supervisor gone'));
}
