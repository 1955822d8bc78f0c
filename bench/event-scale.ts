/**
 * The worker with many consumer groups: its memory after each group polled once, and after
 * idle consumers have left (BROKER_CONSUMER_IDLE_MS).
 */
import { BrokerWorkerClient } from '../gateway/broker-client/index.ts';
import { rssMb } from './child.ts';
import { createTopic, type Stack, startStack } from './event.ts';
import { callTool } from './mcp-call.ts';

export interface ScaleResults {
  gatewayIdleMb: number;
  workerIdleMb: number;
  groups: number;
  workerAfterGroupsMb: number;
  liveConsumersAfterGroups: number;
  liveConsumersAfterIdle: number;
  workerAfterIdleMb: number;
}

export async function benchScale(
  bootstrap: string,
  groups: number,
  idleMs: number,
  log: (line: string) => void,
): Promise<ScaleResults> {
  const stack = await startStack(bootstrap, {
    BROKER_MAX_CONSUMERS: String(groups + 10),
    BROKER_CONSUMER_IDLE_MS: String(idleMs),
  });
  try {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const gatewayIdleMb = await rssMb(stack.gateway.process.pid!);
    const workerPid = Number(stack.worker.info.workerPid);
    const workerIdleMb = await rssMb(workerPid);
    const topic = `bench-scale-${Date.now().toString(36)}`;
    await createTopic(bootstrap, topic, 1);
    await callTool(stack.url, stack.key, 'event_publish', { topic, value: 'hello' });
    log(`scale: ${groups} groups poll once each`);
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < groups) {
          const group = `bench-scale-g${next++}`;
          await callTool(stack.url, stack.key, 'event_consume', { topic, group, max: 1, timeout_ms: 3000 });
        }
      }),
    );
    const workerAfterGroupsMb = await rssMb(workerPid);
    const liveConsumersAfterGroups = await liveConsumers(stack);
    log(`scale: waiting ${idleMs} ms for idle consumers to leave`);
    await new Promise((resolve) => setTimeout(resolve, idleMs + 15_000));
    const liveConsumersAfterIdle = await liveConsumers(stack);
    const workerAfterIdleMb = await rssMb(workerPid);
    return {
      gatewayIdleMb,
      workerIdleMb,
      groups,
      workerAfterGroupsMb,
      liveConsumersAfterGroups,
      liveConsumersAfterIdle,
      workerAfterIdleMb,
    };
  } finally {
    await stack.stop();
  }
}

/** The worker's own count, asked over IPC as the gateway would. */
async function liveConsumers(stack: Stack): Promise<number> {
  const client = BrokerWorkerClient.fromEnv({ BROKER_WORKERS: `unix:${stack.socket}` });
  try {
    const status = await client.call('status', {}, { timeoutMs: 5000 });
    return status.liveConsumers;
  } finally {
    await client.close();
  }
}
