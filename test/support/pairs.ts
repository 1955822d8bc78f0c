/**
 * The fleet of docs/deployment.md#fleet on loopback: N hosts, each a gateway process and a
 * broker-worker process with its own DATA_DIR, every gateway reaching every worker over TCP
 * with BROKER_WORKER_TOKEN, one Postgres (a database of its own on the run's native server), one Valkey
 * and the caller's Kafka. Gateways listen on fixed ports (MCP and ops), so a gateway killed
 * with -9 comes back where a load balancer still looks for it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startValkey, type ValkeyServer } from '../../dev/valkey/valkey.ts';
import { startWorker, type WorkerProcess } from '../broker-worker/support/worker-process.ts';
import { type GatewayProcess, startGatewayProcess } from './gateway-process.ts';
import { freePort } from './harness.ts';
import { createTestDatabase, type TestPostgres } from './postgres.ts';

export interface Host {
  dataDir: string;
  /** The MCP listener, `http://127.0.0.1:port`. */
  url: string;
  address: string;
  opsPort: number;
  gateway: GatewayProcess;
  /** Absent when the fleet was started without Kafka. */
  worker?: WorkerProcess;
}

export interface Pairs {
  hosts: Host[];
  postgres: TestPostgres;
  valkey: ValkeyServer;
  /** What `npm run keys` / `npm run users` need to work on the fleet's store. */
  storeEnv: Record<string, string>;
  killGateway(index: number): Promise<void>;
  restartGateway(index: number): Promise<void>;
  /** Valkey started again on its port (empty: it persists nothing), after `valkey.kill()`. */
  restartValkey(): Promise<void>;
  /** GET /readyz on a gateway's ops listener: its status, 0 when nothing answers. */
  readyz(index: number): Promise<number>;
  close(): Promise<void>;
}

export interface PairsOptions {
  /** The Kafka bootstrap list; without it no worker is started (gateways whose tests need no broker). */
  bootstrap?: string;
  hosts?: number;
  gatewayEnv?: Record<string, string>;
  /** A server to use as the fleet's Postgres as it is (not dropped on close); else a database of the run's server. */
  postgresUrl?: string;
}

interface HostSettings {
  index: number;
  dataDir: string;
  token: string;
  workerAddresses: string[];
  databaseUrl: string;
  redisUrl: string;
}

async function startHost(
  options: PairsOptions,
  settings: HostSettings,
): Promise<{ host: Host; env: Record<string, string> }> {
  const { index, dataDir, token, workerAddresses } = settings;
  const worker = options.bootstrap
    ? await startWorker(
        {
          DATA_DIR: dataDir,
          BROKER_BOOTSTRAP_SERVERS: options.bootstrap,
          BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
          BROKER_WORKER_TOKEN: token,
          BROKER_WORKER_ID: `host${index + 1}`,
        },
        { address: workerAddresses[index]! },
      )
    : undefined;
  const port = await freePort();
  const opsPort = await freePort();
  const env = {
    DATA_DIR: dataDir,
    PORT: String(port),
    METRICS_PORT: String(opsPort),
    HTTP_ENGINE: 'auto',
    DATABASE_URL: settings.databaseUrl,
    RATE_LIMIT_REDIS_URL: settings.redisUrl,
    BROKER_WORKERS: workerAddresses.join(','),
    BROKER_WORKER_TOKEN: token,
    ...options.gatewayEnv,
  };
  const gateway = await startGatewayProcess(env);
  return { host: { dataDir, url: gateway.url, address: `127.0.0.1:${port}`, opsPort, gateway, worker }, env };
}

export async function startPairs(options: PairsOptions): Promise<Pairs> {
  const count = options.hosts ?? 2;
  const token = randomBytes(16).toString('hex');
  const given = options.postgresUrl;
  const postgres: TestPostgres = given
    ? { url: given, database: new URL(given).pathname.slice(1), close: async () => {} }
    : await createTestDatabase();
  let valkey = await startValkey(await freePort());
  const dataDirs: string[] = [];
  const hosts: Host[] = [];
  const gatewayEnvs: Record<string, string>[] = [];
  const close = async () => {
    await Promise.all(hosts.map((host) => host.gateway.stop()));
    await Promise.all(hosts.map((host) => host.worker?.stop()));
    await valkey.stop();
    await postgres.close();
    await Promise.all(dataDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  };
  try {
    const workerAddresses: string[] = [];
    for (let i = 0; i < count; i++) workerAddresses.push(`tcp:127.0.0.1:${await freePort()}`);
    for (let i = 0; i < count; i++) {
      const dataDir = await mkdtemp(join(tmpdir(), `mcp-fleet-host${i + 1}-`));
      dataDirs.push(dataDir);
      const settings = {
        index: i,
        dataDir,
        token,
        workerAddresses,
        databaseUrl: postgres.url,
        redisUrl: valkey.url,
      };
      const { host, env } = await startHost(options, settings);
      gatewayEnvs.push(env);
      hosts.push(host);
    }
  } catch (error) {
    await close();
    throw error;
  }
  const pairs: Pairs = {
    hosts,
    postgres,
    valkey,
    storeEnv: { DATA_DIR: hosts[0]!.dataDir, DATABASE_URL: postgres.url },
    /** SIGKILL is sent before the first await, so a caller can mark the moment right after calling. */
    async killGateway(index) {
      const { child } = hosts[index]!.gateway;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async restartGateway(index) {
      hosts[index]!.gateway = await startGatewayProcess(gatewayEnvs[index]!);
    },
    async restartValkey() {
      valkey = await startValkey(valkey.port);
      pairs.valkey = valkey;
    },
    async readyz(index) {
      try {
        const response = await fetch(`http://127.0.0.1:${hosts[index]!.opsPort}/readyz`);
        await response.arrayBuffer();
        return response.status;
      } catch {
        return 0;
      }
    },
    close,
  };
  return pairs;
}

/** HTTP statuses one client saw, every POST counted (initialize and notifications too). */
export interface Recorder {
  statuses: number[];
}

/**
 * A real MCP SDK client on `${base}/${namespace}/mcp`. With a recorder, every HTTP answer's
 * status is kept, so a test counts what the gateways admitted, not what the SDK surfaced.
 */
export async function mcpClient(
  base: string,
  namespace: string,
  key: string,
  recorder?: Recorder,
): Promise<Client> {
  const client = new Client({ name: 'fleet-test', version: '1.0.0' });
  const recordingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if ((init?.method ?? 'GET') === 'POST') recorder?.statuses.push(response.status);
    return response;
  };
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/${namespace}/mcp`), {
      requestInit: { headers: { 'X-API-Key': key } },
      fetch: recordingFetch,
    }),
  );
  return client;
}

export interface Called<T> {
  ok: boolean;
  text: string;
  data: T;
}

/** A tools/call whose failure (a tool error, an HTTP error, a dropped connection) is a value. */
export async function call<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Called<T>> {
  try {
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
    const content = result.content as Array<{ text?: string }>;
    return {
      ok: result.isError !== true,
      text: content.map((part) => part.text ?? '').join('\n'),
      data: result.structuredContent as T,
    };
  } catch (error) {
    // fetch's own message ("fetch failed") hides what happened to the connection.
    const cause = (error as Error).cause as Error | undefined;
    const text = `${(error as Error).message}${cause ? ` (${cause.message})` : ''}`;
    return { ok: false, text, data: undefined as T };
  }
}
