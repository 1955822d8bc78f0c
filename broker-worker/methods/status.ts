import { usesSasl } from '../../shared/broker-settings.ts';
import type { WorkerStatus } from '../../shared/ipc/messages.ts';
import type { MethodContext } from './context.ts';

/** Configuration and readiness; built only from non-secret fields. */
export function status(ctx: MethodContext): WorkerStatus {
  const { broker } = ctx.settings;
  return {
    configured: ctx.readiness.configured,
    missingSettings: [...ctx.readiness.missingSettings],
    brokerConfigured: ctx.readiness.brokerConfigured,
    credentialsConfigured: ctx.readiness.credentialsConfigured,
    securityProtocol: broker.securityProtocol,
    saslMechanism: usesSasl(broker.securityProtocol) ? broker.saslMechanism : null,
    bootstrapHosts: [...broker.bootstrapServers],
    defaultTopic: broker.defaultTopic,
    defaultGroup: broker.consumerGroup,
    topicAdminEnabled: broker.allowTopicAdmin,
    lastBrokerError: ctx.health.lastError,
    brokerReachable: ctx.health.reachable,
    liveConsumers: ctx.clients?.consumers.size ?? 0,
    bufferedMessages: ctx.clients?.consumers.buffered ?? 0,
    uncommittedMessages: ctx.clients?.consumers.uncommitted ?? 0,
    leasedMessages: ctx.clients?.consumers.leased ?? 0,
    workerId: ctx.settings.workerId,
  };
}
