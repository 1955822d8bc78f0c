import { readFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import type { BrokerPorts } from './config.ts';
import { type BrokerFiles, clusterFile } from './files.ts';

/** What `status` and a second `start` need to know about a broker started by another process. */
export interface BrokerState {
  /** Absent in state files written before clusters: node 1. */
  nodeId?: number;
  pid: number;
  plaintext: string;
  saslPlaintext: string;
  saslSsl: { bootstrap: string; caPemPath: string } | null;
  users: Record<string, string>;
  logFile: string;
  startedAt: string;
}

export async function writeState(files: BrokerFiles, state: BrokerState): Promise<void> {
  await writeFile(files.pidFile, `${state.pid}\n`);
  await writeFile(files.stateFile, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

export async function readState(files: BrokerFiles): Promise<BrokerState | undefined> {
  try {
    return JSON.parse(await readFile(files.stateFile, 'utf8')) as BrokerState;
  } catch {
    return undefined;
  }
}

export async function readPid(files: BrokerFiles): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(files.pidFile, 'utf8')).trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export async function clearState(files: BrokerFiles): Promise<void> {
  await rm(files.pidFile, { force: true });
  await rm(files.stateFile, { force: true });
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A pid file can outlive its broker and the pid be reused by something else; on Linux the
 * command line tells whether that pid is still the broker of this data dir. Zombies (exited but
 * not yet reaped by a parent) count as gone.
 */
export function isBrokerProcess(pid: number, files: BrokerFiles): boolean {
  if (!isAlive(pid)) return false;
  let cmdline: string;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (/^\d+ \(.*\) Z /s.test(stat)) return false;
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    // No procfs (macOS): a live pid from our own pid file is the best evidence there is.
    return true;
  }
  const args = cmdline.split('\0');
  return args.includes('kafka.Kafka') && args.includes(files.serverProperties);
}

/** The ports a broker was first started on, kept in its dir so a restart serves the same addresses. */
export async function readPorts(files: BrokerFiles): Promise<BrokerPorts | undefined> {
  try {
    const ports = JSON.parse(await readFile(files.portsFile, 'utf8')) as BrokerPorts;
    const valid = (p: unknown) => Number.isInteger(p) && (p as number) > 0 && (p as number) <= 65535;
    if (!valid(ports.plaintext) || !valid(ports.saslPlaintext) || !valid(ports.controller)) return undefined;
    return { ...ports, saslSsl: valid(ports.saslSsl) ? ports.saslSsl : null };
  } catch {
    return undefined;
  }
}

export async function writePorts(files: BrokerFiles, ports: BrokerPorts): Promise<void> {
  await writeFile(files.portsFile, `${JSON.stringify(ports, null, 2)}\n`);
}

/** A data dir's shape: how many nodes it was first started with, and their cluster id. */
export interface ClusterLayout {
  brokers: number;
  clusterId: string;
}

export async function readLayout(dataDir: string): Promise<ClusterLayout | undefined> {
  try {
    return JSON.parse(await readFile(clusterFile(dataDir), 'utf8')) as ClusterLayout;
  } catch {
    return undefined;
  }
}

export async function writeLayout(dataDir: string, layout: ClusterLayout): Promise<void> {
  await writeFile(clusterFile(dataDir), `${JSON.stringify(layout, null, 2)}\n`);
}
