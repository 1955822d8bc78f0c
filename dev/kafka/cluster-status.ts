/**
 * What a data dir's nodes are doing (status) and stopping them (stop), for a broker or
 * cluster started by this process or another one (the CLI starts them detached).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { terminate } from './broker-process.ts';
import type { BrokerPorts } from './config.ts';
import { type BrokerFiles, nodeFiles } from './files.ts';
import { probe } from './ready.ts';
import {
  type BrokerState,
  clearState,
  isBrokerProcess,
  readLayout,
  readPid,
  readPorts,
  readState,
} from './state.ts';

/** A node as its data dir shows it: its stored ports, and its state while it runs. */
export interface NodeStatus {
  nodeId: number;
  running: boolean;
  files: BrokerFiles;
  ports: BrokerPorts | undefined;
  state: BrokerState | undefined;
}

/**
 * `running` when any node runs; the flat BrokerState fields then hold the bootstrap lists
 * over every node (running or not: clients name them all) and the first running node's pid.
 */
export type LocalKafkaStatus =
  | { running: false; dataDir: string; nodes: NodeStatus[] }
  | ({ running: true; dataDir: string; serving: boolean; nodes: NodeStatus[] } & BrokerState);

/**
 * How many nodes a data dir holds: its cluster.json, or 1 for a broker started before
 * clusters existed (its log dir sits at the top), or undefined for a fresh dir.
 */
export async function brokersOf(dataDir: string): Promise<number | undefined> {
  const layout = await readLayout(dataDir);
  if (layout) return layout.brokers;
  return existsSync(join(dataDir, 'kraft-logs')) ? 1 : undefined;
}

async function nodeStatus(dataDir: string, brokers: number, nodeId: number): Promise<NodeStatus> {
  const files = nodeFiles(dataDir, brokers, nodeId);
  const pid = await readPid(files);
  const state = await readState(files);
  const running =
    pid !== undefined && state !== undefined && state.pid === pid && isBrokerProcess(pid, files);
  let ports = await readPorts(files);
  // A broker started before ports were stored: its state file has them while it runs.
  if (!ports && running && state) {
    const portOf = (address: string) => Number(address.slice(address.lastIndexOf(':') + 1));
    ports = {
      plaintext: portOf(state.plaintext),
      saslPlaintext: portOf(state.saslPlaintext),
      controller: 0,
      saslSsl: state.saslSsl ? portOf(state.saslSsl.bootstrap) : null,
    };
  }
  return { nodeId, running, files, ports, state: running ? state : undefined };
}

export async function nodesOf(dataDir: string, brokers: number): Promise<NodeStatus[]> {
  const ids = Array.from({ length: brokers }, (_, i) => i + 1);
  return Promise.all(ids.map((id) => nodeStatus(dataDir, brokers, id)));
}

const list = (ports: Array<number | null | undefined>) =>
  ports.every((p) => p) ? ports.map((p) => `127.0.0.1:${p}`).join(',') : '';

/** Is a broker (or cluster) from this data dir running, possibly started by another process? */
export async function localKafkaStatus(dataDir: string, probeTimeoutMs = 3000): Promise<LocalKafkaStatus> {
  const dir = resolve(dataDir);
  const brokers = (await brokersOf(dir)) ?? 1;
  const nodes = await nodesOf(dir, brokers);
  const first = nodes.find((n) => n.running)?.state;
  if (!first) return { running: false, dataDir: dir, nodes };
  const stored = nodes.map((n) => n.ports);
  const plaintext = list(stored.map((p) => p?.plaintext)) || first.plaintext;
  const saslPlaintext = list(stored.map((p) => p?.saslPlaintext)) || first.saslPlaintext;
  const ssl = list(stored.map((p) => p?.saslSsl));
  const serving = await probe({ name: 'PLAINTEXT', bootstrap: first.plaintext }, probeTimeoutMs).then(
    () => true,
    () => false,
  );
  return {
    running: true,
    dataDir: dir,
    serving,
    nodes,
    ...first,
    plaintext,
    saslPlaintext,
    saslSsl: first.saslSsl && ssl ? { ...first.saslSsl, bootstrap: ssl } : first.saslSsl,
  };
}

/**
 * Stops every node of a data dir, whoever started them. Returns false when none was running.
 * Stale pid and state files are removed either way.
 */
export async function stopLocalKafka(
  dataDir: string,
  log: (line: string) => void = () => {},
): Promise<boolean> {
  const dir = resolve(dataDir);
  const nodes = await nodesOf(dir, (await brokersOf(dir)) ?? 1);
  const running = nodes.filter((n) => n.running && n.state);
  // All at once: a cluster node stopping alone waits on the quorum for its controlled shutdown.
  await Promise.all(
    running.map(async (node) => {
      log(`stopping broker ${node.nodeId} (pid ${node.state!.pid})`);
      await terminate(node.state!.pid, log);
    }),
  );
  await Promise.all(nodes.map((n) => clearState(n.files)));
  return running.length > 0;
}
