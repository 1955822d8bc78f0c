export {
  BrokerWorkerClient,
  type BrokerWorkerClientOptions,
  type CallOptions,
  type WorkerLinkState,
} from './client.ts';
export { WorkerCallError, type WorkerCallErrorCode } from './errors.ts';
export { hash32, pickWorker } from './routing.ts';
export { type BrokerClientSettings, loadBrokerClientSettings } from './settings.ts';
