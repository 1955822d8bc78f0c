import { Kafka, logLevel, type SASLOptions } from 'kafkajs';

export interface ProbeTarget {
  name: string;
  bootstrap: string;
  sasl?: { username: string; password: string };
  caPem?: string;
  /** Serving means describeCluster lists at least this many brokers (a cluster's nodes). Default 1. */
  brokers?: number;
}

/**
 * One metadata round trip through a real client, the same path the gateway takes. An open port
 * is not enough: the broker binds its listeners before the controller has elected itself and
 * before SASL is wired, and during that window clients get errors.
 */
export async function probe(target: ProbeTarget, timeoutMs: number): Promise<{ brokers: number }> {
  const sasl: SASLOptions | undefined = target.sasl
    ? { mechanism: 'plain', username: target.sasl.username, password: target.sasl.password }
    : undefined;
  const kafka = new Kafka({
    clientId: 'local-kafka-probe',
    brokers: [target.bootstrap],
    ssl: target.caPem ? { ca: [target.caPem] } : false,
    sasl,
    connectionTimeout: Math.min(timeoutMs, 3000),
    authenticationTimeout: timeoutMs,
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
    // Refused connections are expected while the broker boots; they are not worth printing.
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return { brokers: cluster.brokers.length };
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/**
 * Polls every listener until each answers a metadata request. `shouldStop` lets the caller
 * abandon the wait the moment the broker process dies or the deadline passes.
 */
export async function waitUntilServing(
  targets: ProbeTarget[],
  shouldStop: () => boolean,
  onProgress: (pending: string[]) => void = () => {},
): Promise<boolean> {
  const pending = new Set(targets);
  let lastReport = Date.now();
  while (pending.size > 0) {
    if (shouldStop()) return false;
    for (const target of [...pending]) {
      try {
        const seen = await probe(target, 3000);
        if (seen.brokers >= (target.brokers ?? 1)) pending.delete(target);
      } catch {
        // Not yet; try again after a short pause.
      }
    }
    if (pending.size === 0) break;
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      onProgress([...pending].map((t) => t.name));
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return true;
}
