/**
 * A throwaway plaintext broker in a temporary directory, for a bench section or a test
 * file that needs broker settings of its own or must stop the broker itself (the shared
 * test broker can do neither). The initial rebalance delay decides a new group's first
 * poll: 0 is fast, Kafka's default 3000 ms is what managed services run.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LocalKafka, startLocalKafka } from './local-kafka.ts';

export interface PrivateKafka {
  kafka: LocalKafka;
  /** Stops the broker (again, if it was stopped already) and removes its data. */
  cleanup(): Promise<void>;
}

/** `shortLived` for a test file's broker (see LocalKafkaOptions); benches keep the full JVM. */
export async function startPrivateKafka(
  initialRebalanceDelayMs: number,
  options: { shortLived?: boolean } = {},
): Promise<PrivateKafka> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-private-kafka-'));
  const kafka = await startLocalKafka({
    dataDir,
    plaintextPort: 0,
    saslPlaintextPort: 0,
    saslSslPort: null,
    controllerPort: 0,
    initialRebalanceDelayMs,
    shortLived: options.shortLived ?? false,
  });
  return {
    kafka,
    async cleanup() {
      await kafka.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
