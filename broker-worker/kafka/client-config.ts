/**
 * Builds the kafkajs client configuration from the validated settings. The returned object
 * holds the SASL password: it is handed to `new Kafka()` and to nothing else (never logged).
 */
import type { KafkaConfig, SASLOptions } from 'kafkajs';
import { usesSasl, usesTls } from '../../shared/broker-settings.ts';
import type { Logger } from '../logger.ts';
import type { WorkerSettings } from '../settings.ts';
import { kafkaLogCreator, kafkaLogLevel } from './log-bridge.ts';

export function kafkaClientConfig(settings: WorkerSettings, logger: Logger): KafkaConfig {
  const { broker } = settings;
  let sasl: SASLOptions | undefined;
  if (usesSasl(broker.securityProtocol) && broker.credentials) {
    const { username, password } = broker.credentials;
    if (broker.saslMechanism === 'PLAIN') sasl = { mechanism: 'plain', username, password };
    else if (broker.saslMechanism === 'SCRAM-SHA-256')
      sasl = { mechanism: 'scram-sha-256', username, password };
    else sasl = { mechanism: 'scram-sha-512', username, password };
  }
  const tls = usesTls(broker.securityProtocol);
  return {
    clientId: broker.clientId,
    brokers: broker.bootstrapServers,
    ssl: tls ? (settings.sslCa ? { ca: [settings.sslCa] } : true) : false,
    ...(sasl ? { sasl } : {}),
    connectionTimeout: 5000,
    authenticationTimeout: 10_000,
    requestTimeout: 30_000,
    // Calls carry their own deadlines; these retries only smooth over brief hiccups.
    retry: { initialRetryTime: 200, maxRetryTime: 3000, retries: 5 },
    logLevel: kafkaLogLevel(settings.logLevel),
    logCreator: kafkaLogCreator(logger),
  };
}
