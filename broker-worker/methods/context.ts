/** What every method implementation gets: settings, health, and the Kafka clients when configured. */
import type { z } from 'zod';
import { type BrokerReadiness, brokerReadiness } from '../../shared/broker-settings.ts';
import type { BrokerClients } from '../broker.ts';
import { MethodError } from '../errors.ts';
import type { BrokerHealth } from '../health.ts';
import type { WorkerSettings } from '../settings.ts';
import { parseParams } from './params.ts';

export interface MethodContext {
  settings: WorkerSettings;
  readiness: BrokerReadiness;
  health: BrokerHealth;
  /** Null while the worker is unconfigured. */
  clients: BrokerClients | null;
}

export function makeContext(
  settings: WorkerSettings,
  health: BrokerHealth,
  clients: BrokerClients | null,
): MethodContext {
  return { settings, readiness: brokerReadiness(settings.broker), health, clients };
}

/** The Kafka clients, or NOT_CONFIGURED naming the settings that are missing. */
export function requireClients(ctx: MethodContext): BrokerClients {
  if (ctx.clients) return ctx.clients;
  const missing = ctx.readiness.missingSettings;
  const protocol = ctx.settings.broker.securityProtocol;
  const why =
    missing.includes('BROKER_API_KEY') || missing.includes('BROKER_API_SECRET')
      ? ` (BROKER_SECURITY_PROTOCOL is ${protocol}, which needs SASL credentials)`
      : '';
  throw new MethodError(
    'NOT_CONFIGURED',
    `The event tools are not configured on this server: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set${why}. ` +
      'Ask the server operator to set them and restart the broker worker; event_capabilities shows the current status.',
  );
}

export function resolveTopic(ctx: MethodContext, topic: string | undefined): string {
  const chosen = topic ?? ctx.settings.broker.defaultTopic;
  if (chosen) return chosen;
  throw new MethodError(
    'NO_DEFAULT_TOPIC',
    'No topic was given and the server has no default topic (BROKER_DEFAULT_TOPIC is not set). Pass `topic`; event_topics lists the topics.',
  );
}

/**
 * How a call on one topic starts: its arguments re-validated, the Kafka clients (or
 * NOT_CONFIGURED), and the topic it names or the server's default.
 */
export function topicCall<S extends z.ZodType<{ topic?: string | undefined }>>(
  ctx: MethodContext,
  schema: S,
  params: unknown,
): { input: z.output<S>; clients: BrokerClients; topic: string } {
  const input = parseParams(schema, params);
  const clients = requireClients(ctx);
  return { input, clients, topic: resolveTopic(ctx, input.topic) };
}
