import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DestinationStream } from 'pino';
import { loadGatewayConfig } from '../../gateway/config.ts';
import type { ApiKeyStore } from '../../gateway/keys/store.ts';
import { createLogger } from '../../gateway/logger.ts';
import type { AccessHooks } from '../../gateway/mcp/access.ts';
import type { BrokerCalls } from '../../gateway/namespaces/event/broker-calls.ts';
import type { GatewayMetrics } from '../../gateway/ops/metrics.ts';
import { type RunningGateway, startGateway } from '../../gateway/server.ts';
import { openKeyStore } from './harness.ts';

export interface TestGateway {
  url: string;
  port: number;
  apiKey: string;
  apiKeyId: string;
  dataDir: string;
  gateway: RunningGateway;
  /** Opens the same key store the gateway reads, for minting or revoking keys mid-test. */
  withStore<T>(fn: (store: ApiKeyStore) => T): T;
  close(): Promise<void>;
}

/** A broker link that is honestly absent: every call fails as a down worker would. */
export const absentBroker: BrokerCalls = {
  call() {
    return Promise.reject(
      Object.assign(new Error('The broker worker is unreachable.'), { code: 'WORKER_UNREACHABLE' }),
    );
  },
};

/** A real gateway on a free loopback port, with its own key store holding one fresh key. */
export async function startTestGateway(
  options: {
    engine?: 'uws' | 'node';
    broker?: BrokerCalls;
    env?: Record<string, string>;
    dataDir?: string;
    logDestination?: DestinationStream;
    access?: AccessHooks;
    metrics?: GatewayMetrics;
  } = {},
): Promise<TestGateway> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'mcp-gw-test-')));
  const withStore = <T>(fn: (store: ApiKeyStore) => T): T => {
    const store = openKeyStore(dataDir);
    try {
      return fn(store);
    } finally {
      store.close();
    }
  };
  const created = withStore((store) => store.create('test', 'test-suite'));
  const env = {
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: dataDir,
    HTTP_ENGINE: options.engine ?? 'auto',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...options.env,
  };
  const config = loadGatewayConfig(env);
  const gateway = await startGateway({
    config,
    env,
    log: createLogger(config.LOG_LEVEL, options.logDestination),
    broker: options.broker ?? absentBroker,
    ...(options.access ? { access: options.access } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  return {
    url: `http://127.0.0.1:${gateway.port}`,
    port: gateway.port,
    apiKey: created.key,
    apiKeyId: created.id,
    dataDir,
    gateway,
    withStore,
    async close() {
      await gateway.close();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
