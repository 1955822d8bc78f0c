/**
 * Our gateway for the benchmark. With BROKER_WORKERS set it talks to a real broker worker;
 * without, tools/list and 401s are measured on their own (nothing reaches a worker), and
 * the worker's `status` (behind event_capabilities) and `publish` are answered in-process,
 * so a tools/call is measured through the gateway alone.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerWorkerClient } from '../../gateway/broker-client/index.ts';
import { loadGatewayConfig } from '../../gateway/config.ts';
import { ApiKeyStore } from '../../gateway/keys/store.ts';
import { createLogger } from '../../gateway/logger.ts';
import type { BrokerCalls } from '../../gateway/namespaces/event/broker-calls.ts';
import { keyStorePath, startGateway } from '../../gateway/server.ts';
import type { WorkerStatus } from '../../shared/ipc/messages.ts';
import { startTracing } from '../../shared/tracing.ts';
import { announce } from './ready.ts';

const dataDir = process.env.DATA_DIR ?? (await mkdtemp(join(tmpdir(), 'mcp-bench-gw-')));
const store = new ApiKeyStore(keyStorePath(dataDir));
const { key } = store.create('bench');
// A second key for the fairness rows (one key floods, the other is measured).
const { key: otherKey } = store.create('bench-other');
store.close();
const config = loadGatewayConfig({ ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' });
/** A configured, reachable worker and broker, as `status` reports them. */
const FIXED_STATUS: WorkerStatus = {
  configured: true,
  missingSettings: [],
  brokerConfigured: true,
  credentialsConfigured: true,
  securityProtocol: 'PLAINTEXT',
  saslMechanism: null,
  bootstrapHosts: ['127.0.0.1:9092'],
  defaultTopic: 'bench',
  defaultGroup: 'bench',
  topicAdminEnabled: false,
  lastBrokerError: null,
  brokerReachable: true,
  liveConsumers: 0,
  bufferedMessages: 0,
  workerId: 'bench-stand-in',
};
let offset = 0;
/**
 * Without a worker, `status` and `publish` are answered here, as the worker answers them, so
 * tools/call on event_capabilities and event_publish measure the gateway's own work (the
 * worker and Kafka have their own rows in the event bench).
 */
const standIn = (method: string, params: { topic?: string } | undefined) => {
  if (method === 'status') return Promise.resolve(FIXED_STATUS);
  if (method === 'publish')
    return Promise.resolve({
      topic: params?.topic ?? 'bench',
      partition: 0,
      offset: offset++,
      timestamp: new Date().toISOString(),
    });
  return Promise.reject(
    Object.assign(new Error('no broker worker in this benchmark'), { code: 'WORKER_UNREACHABLE' }),
  );
};
const broker: BrokerCalls = process.env.BROKER_WORKERS
  ? BrokerWorkerClient.fromEnv(process.env)
  : ({ call: standIn } as unknown as BrokerCalls);
// Traced exactly as a production gateway is when OTEL_EXPORTER_OTLP_ENDPOINT is set.
const tracing = await startTracing(process.env, 'mcp-gateway', () => {});
const gateway = await startGateway({
  config,
  log: createLogger('silent'),
  broker,
  ...(tracing ? { tracer: tracing.tracer } : {}),
});
announce({ port: gateway.port, key, otherKey, engine: gateway.engine, build: gateway.build });
