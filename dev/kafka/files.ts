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
}

export function brokerFiles(dataDir: string): BrokerFiles {
  return {
    dataDir,
    logDir: join(dataDir, 'kraft-logs'),
    tlsDir: join(dataDir, 'tls'),
    serverProperties: join(dataDir, 'server.properties'),
    log4jProperties: join(dataDir, 'log4j2.properties'),
    logFile: join(dataDir, 'server.log'),
    pidFile: join(dataDir, 'kafka.pid'),
    stateFile: join(dataDir, 'kafka-state.json'),
  };
}
