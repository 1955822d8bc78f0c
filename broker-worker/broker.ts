/**
 * The worker's Kafka clients, built once when the broker is configured: the admin client,
 * the pooled producer, the warm group consumers and the group-less reader. They connect
 * lazily, so a worker starts (and answers `status`) even while the broker is down.
 */
import { Kafka, type KafkaConfig } from 'kafkajs';
import { ConsumerPool } from './consume/consumer-pool.ts';
import { GrouplessReader } from './consume/groupless-reader.ts';
import type { BrokerHealth } from './health.ts';
import { kafkaClientConfig } from './kafka/client-config.ts';
import { LazyConnection } from './kafka/lazy.ts';
import { Publisher } from './kafka/publisher.ts';
import { TopicDirectory } from './kafka/topic-directory.ts';
import type { Logger } from './logger.ts';
import type { WorkerSettings } from './settings.ts';

export class BrokerClients {
  readonly admin: LazyConnection<ReturnType<Kafka['admin']>>;
  readonly topics: TopicDirectory;
  readonly publisher: Publisher;
  readonly consumers: ConsumerPool;
  readonly groupless: GrouplessReader;
  /** The client the others were built from (for one-off raw requests). */
  readonly kafka: Kafka;

  constructor(settings: WorkerSettings, logger: Logger, health: BrokerHealth) {
    const config: KafkaConfig = kafkaClientConfig(settings, logger);
    const kafka = new Kafka(config);
    this.kafka = kafka;
    this.admin = new LazyConnection(() => kafka.admin());
    this.topics = new TopicDirectory(this.admin);
    this.publisher = new Publisher(kafka);
    this.consumers = new ConsumerPool({
      kafkaConfig: config,
      sessionTimeoutMs: settings.sessionTimeoutMs,
      idleMs: settings.consumerIdleMs,
      maxConsumers: settings.maxConsumers,
      logger,
      health,
      lingerMs: settings.consumeLingerMs,
      ackTimeoutMs: settings.consumeAckTimeoutMs,
      uncommittedMax: settings.consumeUncommittedMax,
    });
    this.groupless = new GrouplessReader(new Kafka(config));
  }

  /** Consumers leave their groups, the producer finishes its sends, connections close. */
  async close(): Promise<void> {
    await this.consumers.close();
    await Promise.allSettled([this.publisher.close(), this.groupless.close(), this.admin.close()]);
  }
}
