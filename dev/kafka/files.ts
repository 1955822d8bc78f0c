import { join } from 'node:path';

/** Where one broker keeps everything inside its data dir. */
export interface BrokerFiles {
  dataDir: string;
  logDir: string;
  tlsDir: string;
  serverProperties: string;
  log4jProperties: string;
  logFile: string;
  pidFile: string;
  stateFile: string;
  /** The ports this broker was first given; later starts reuse them (see ports.ts). */
  portsFile: string;
}

export function brokerFiles(dataDir: string, tlsDir = join(dataDir, 'tls')): BrokerFiles {
  return {
    dataDir,
    logDir: join(dataDir, 'kraft-logs'),
    tlsDir,
    serverProperties: join(dataDir, 'server.properties'),
    log4jProperties: join(dataDir, 'log4j2.properties'),
    logFile: join(dataDir, 'server.log'),
    pidFile: join(dataDir, 'kafka.pid'),
    stateFile: join(dataDir, 'kafka-state.json'),
    portsFile: join(dataDir, 'ports.json'),
  };
}

/** What a cluster's data dir says about itself: how many nodes, and the id they were formatted with. */
export function clusterFile(dataDir: string): string {
  return join(dataDir, 'cluster.json');
}

/**
 * A one-broker data dir is that broker's own dir (the layout from before clusters, so existing
 * dev data dirs keep working); a cluster's nodes each get `node-<id>/`, sharing one TLS dir.
 */
export function nodeFiles(dataDir: string, brokers: number, nodeId: number): BrokerFiles {
  if (brokers === 1) return brokerFiles(dataDir);
  return brokerFiles(join(dataDir, `node-${nodeId}`), join(dataDir, 'tls'));
}
