/**
 * The whole product for a test: a real broker-worker process, the gateway's IPC client to
 * it, a gateway on a free port, and MCP SDK clients speaking Streamable HTTP to it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { BrokerWorkerClient } from '../../gateway/broker-client/client.ts';
import { clientFor, startWorker, type WorkerProcess } from '../broker-worker/support/worker-process.ts';
import { startTestGateway, type TestGateway } from './gateway.ts';

export interface EventStack {
  gw: TestGateway;
  worker: WorkerProcess;
  brokerClient: BrokerWorkerClient;
  workerEnv: Record<string, string>;
  /** A connected SDK client; closed with the stack. */
  mcp(): Promise<Client>;
  /** Stops the worker process (SIGTERM); the gateway stays up. */
  stopWorker(): Promise<void>;
  /** Starts the worker again on the same socket; the gateway reconnects on its own. */
  restartWorker(): Promise<void>;
  close(): Promise<void>;
}

export async function startEventStack(
  workerEnv: Record<string, string>,
  options: { engine?: 'uws' | 'node' } = {},
): Promise<EventStack> {
  let worker = await startWorker(workerEnv);
  const address = worker.address;
  const brokerClient = clientFor(address);
  const gw = await startTestGateway({
    broker: brokerClient,
    ...(options.engine ? { engine: options.engine } : {}),
    ...(workerEnv.BROKER_CONSUMER_GROUP
      ? { env: { BROKER_CONSUMER_GROUP: workerEnv.BROKER_CONSUMER_GROUP } }
      : {}),
  });
  const clients: Client[] = [];
  return {
    gw,
    get worker() {
      return worker;
    },
    brokerClient,
    workerEnv,
    async mcp() {
      const client = new Client({ name: 'event-e2e', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${gw.url}/event/mcp`), {
          requestInit: { headers: { 'X-API-Key': gw.apiKey } },
        }),
      );
      clients.push(client);
      return client;
    },
    async stopWorker() {
      await worker.stop();
    },
    async restartWorker() {
      worker = await startWorker(workerEnv, { address });
    },
    async close() {
      await Promise.all(clients.map((client) => client.close()));
      await gw.close();
      await brokerClient.close();
      await worker.stop();
    },
  };
}

export interface ToolOutcome<T> {
  isError: boolean;
  text: string;
  data: T;
}

/** Calls a tool and returns its structured result (or the error text). */
export async function callTool<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolOutcome<T>> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
  const content = result.content as Array<{ type: string; text?: string }>;
  return {
    isError: result.isError === true,
    text: content.map((part) => part.text ?? '').join('\n'),
    data: result.structuredContent as T,
  };
}

/**
 * Polls `group` on `topic` until the answer is no longer "joining", so messages published
 * afterwards are fetched and waiting for the next poll instead of a join in progress.
 */
export async function joinGroup(client: Client, topic: string, group: string): Promise<void> {
  for (let joined = false; !joined; ) {
    const poll = await callTool<ConsumeData & { joining?: boolean }>(client, 'event_consume', {
      topic,
      group,
      timeout_ms: 1000,
    });
    if (poll.isError) throw new Error(`joining group ${group} failed: ${poll.text}`);
    joined = poll.data.joining !== true;
  }
}

export interface ConsumedMessage {
  topic: string;
  partition: number;
  offset: number;
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
  timestamp: string;
}
export interface ConsumeData {
  count: number;
  group: string;
  messages: ConsumedMessage[];
}
