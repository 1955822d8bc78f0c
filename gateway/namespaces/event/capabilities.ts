/**
 * What event_capabilities reports: asked of the broker worker on each call (its status is
 * the truth about the broker), so it answers, saying so, while the worker is down. The
 * question is not cancelled when the caller leaves: its deadline bounds it anyway, and an
 * AbortSignal per call (made, listened to, dropped) cost more than the question itself.
 */
import { callDeadlineMs, type WorkerStatus } from '../../../shared/ipc/messages.ts';
import type { CapabilityReport } from '../../mcp/namespace-contract.ts';
import type { BrokerCalls } from './broker-calls.ts';
import { UNTRUSTED_PAYLOADS } from './descriptions.ts';
import type { Provenance } from './provenance.ts';
import { asToolError } from './tools.ts';

export async function eventCapabilities(
  broker: BrokerCalls,
  defaultGroup: string | undefined,
  provenance: Provenance,
): Promise<CapabilityReport> {
  let status: WorkerStatus | null = null;
  let workerError: string | null = null;
  try {
    status = await broker.call('status', {}, { timeoutMs: callDeadlineMs('status', {}) });
  } catch (error) {
    workerError = asToolError(error).message;
  }
  const problems = [workerError, status?.lastBrokerError?.message ?? null].filter(
    (problem): problem is string => problem !== null,
  );
  return {
    ready: status?.configured === true && workerError === null && status.brokerReachable !== false,
    configured: status?.configured === true,
    missingSettings: status?.missingSettings ?? [],
    problems,
    details: {
      worker: { reachable: status !== null, error: workerError },
      broker: status && {
        configured: status.configured,
        brokerConfigured: status.brokerConfigured,
        credentialsConfigured: status.credentialsConfigured,
        missingSettings: status.missingSettings,
        securityProtocol: status.securityProtocol,
        saslMechanism: status.saslMechanism,
        bootstrapHosts: status.bootstrapHosts,
        lastBrokerError: status.lastBrokerError,
        reachable: status.brokerReachable ?? null,
      },
      defaultTopic: status?.defaultTopic ?? null,
      defaultGroup: status?.defaultGroup ?? defaultGroup ?? null,
      topicAdminEnabled: status?.topicAdminEnabled ?? null,
      untrustedPayloads: UNTRUSTED_PAYLOADS,
      provenance: provenance.capabilities(),
    },
  };
}
