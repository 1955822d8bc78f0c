/** What every bench section records about where it ran, and the private brokers it starts. */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { type LocalKafka, startLocalKafka } from '../dev/kafka/local-kafka.ts';

/** Figures only mean something beside the machine they came from. */
export function machineInfo(): { cores: number; cpu: string; memoryGb: number; node: string } {
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  };
}

/**
 * A private Kafka broker for a bench section. The initial rebalance delay is a parameter
 * because it decides a new group's first poll: 0 for the publish and scale rows, Kafka's
 * default 3000 ms for the consume rows, as managed services have.
 */
export async function benchBroker(
  initialRebalanceDelayMs: number,
): Promise<{ kafka: LocalKafka; cleanup(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-bench-kafka-'));
  const kafka = await startLocalKafka({
    dataDir,
    plaintextPort: 0,
    saslPlaintextPort: 0,
    saslSslPort: null,
    controllerPort: 0,
    initialRebalanceDelayMs,
  });
  return {
    kafka,
    async cleanup() {
      await kafka.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
