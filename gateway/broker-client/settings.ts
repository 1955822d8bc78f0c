/**
 * The gateway's side of the IPC settings.
 *
 * | BROKER_WORKERS        | unix:<DATA_DIR>/broker-worker.sock | comma-separated worker addresses (unix:/path or tcp:host:port); |
 * |                       |                                    | calls of one consumer group always go to the same one           |
 * | BROKER_CONSUMER_GROUP | (none)                             | the default group, used as the routing key when a poll names none |
 * | BROKER_WORKER_TOKEN   | (none)                             | shared secret sent in hello (must match the workers')             |
 */

import { SettingsError } from '../../shared/broker-settings.ts';
import { defaultEndpoint, parseEndpointList, type WorkerEndpoint } from '../../shared/ipc/endpoint.ts';

export interface BrokerClientSettings {
  workers: WorkerEndpoint[];
  defaultGroup: string | null;
  token: string | null;
}

export function loadBrokerClientSettings(
  env: Record<string, string | undefined> = process.env,
): BrokerClientSettings {
  const raw = env.BROKER_WORKERS?.trim();
  let workers: WorkerEndpoint[];
  try {
    workers = raw ? parseEndpointList(raw) : [defaultEndpoint(env.DATA_DIR || './data')];
  } catch (error) {
    throw new SettingsError('BROKER_WORKERS', (error as Error).message);
  }
  return {
    workers,
    defaultGroup: env.BROKER_CONSUMER_GROUP?.trim() || null,
    token: env.BROKER_WORKER_TOKEN || null,
  };
}
