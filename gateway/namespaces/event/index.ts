import type { Logger } from 'pino';
import { type CapabilityReport, defineNamespace } from '../../mcp/namespace-contract.ts';
import type { ToolDefinition } from '../../mcp/tool.ts';
import type { BrokerCalls } from './broker-calls.ts';
import { NAMESPACE_INSTRUCTIONS } from './descriptions.ts';
import type { LeaseSettler } from './lease-settler.ts';
import { type KeyRing, keyRingOf, signingSettings } from './signing-keys.ts';

/** What the event namespace uses of what the registry hands every namespace. */
export interface EventDependencies {
  broker: BrokerCalls;
  /** The gateway's view of BROKER_CONSUMER_GROUP, used only to route default-group polls. */
  defaultGroup?: string;
  log?: Logger;
}

/** The codes event tools answer with (the broker worker's, passed through, and the gateway's own). */
export const EVENT_ERROR_CODES = {
  NOT_CONFIGURED: 'The broker worker has no broker settings; event_capabilities names the missing ones.',
  WORKER_UNREACHABLE:
    'The broker worker is down or restarting; retry once event_capabilities shows it reachable.',
  NO_DEFAULT_TOPIC: 'No topic was given and BROKER_DEFAULT_TOPIC is not set: pass `topic`.',
  NO_DEFAULT_GROUP: 'A group poll named no group and BROKER_CONSUMER_GROUP is not set: pass `group`.',
  TOPIC_ADMIN_DISABLED: 'Creating and deleting topics is off (BROKER_ALLOW_TOPIC_ADMIN).',
  UNKNOWN_TOPIC: 'The topic does not exist; event_topics lists the topics.',
  TOPIC_EXISTS: 'The topic already exists.',
  TOPIC_RESERVED: 'Internal or reserved topics are never created or deleted.',
  INVALID_ARGUMENT:
    'The broker refused an argument (or a header uses the reserved prefix); the message says which.',
  AUTHENTICATION_FAILED: 'The broker refused the worker credentials.',
  BROKER_ERROR: 'The broker failed the call; retry, the message says what it answered.',
  DEADLINE_EXCEEDED: 'The call ran out of time; the outcome of a publish is unknown.',
  CANCELLED: 'The client went away before the answer.',
  OVERLOADED: 'Too many calls in flight or live consumers; retry shortly.',
  INTERNAL: 'The worker failed unexpectedly; retry, or report the message.',
} as const;

interface LiveEvent {
  tools: ToolDefinition[];
  capabilities(): Promise<CapabilityReport>;
  settler: LeaseSettler;
}

/**
 * The tools and what they run on (provenance signing, the lease settler), built by the
 * namespace's first request: an idle gateway holds none of their modules or schemas.
 */
async function liveEvent(
  keyRing: KeyRing,
  { broker, defaultGroup, log }: EventDependencies,
): Promise<LiveEvent> {
  const [{ LeaseSettler }, { Provenance }, { createEventTools }, { eventCapabilities }] = await Promise.all([
    import('./lease-settler.ts'),
    import('./provenance.ts'),
    import('./tools.ts'),
    import('./capabilities.ts'),
  ]);
  const settler = new LeaseSettler(broker, (error) =>
    log?.debug(
      { err: (error as Error).message },
      'could not settle poll leases; the worker hands them out again',
    ),
  );
  const provenance = new Provenance(keyRing);
  return {
    tools: createEventTools({
      broker,
      ...(defaultGroup === undefined ? {} : { defaultGroup }),
      provenance,
      settler,
    }),
    capabilities: () => eventCapabilities(broker, defaultGroup, provenance),
    settler,
  };
}

export const eventNamespace = defineNamespace({
  name: 'event',
  title: 'Event bridge: publish and consume Kafka messages',
  version: '0.1.0',
  instructions: NAMESPACE_INSTRUCTIONS,
  settings: signingSettings,
  errorCodes: EVENT_ERROR_CODES,
  create(settings, deps: EventDependencies) {
    const keyRing = keyRingOf(settings);
    let live: Promise<LiveEvent> | undefined;
    const load = (): Promise<LiveEvent> => {
      live ??= liveEvent(keyRing, deps).catch((error: unknown) => {
        live = undefined;
        throw error;
      });
      return live;
    };
    return {
      tools: async () => (await load()).tools,
      capabilities: async () => (await load()).capabilities(),
      // Answers already written get their commits out before the worker link closes.
      close: async () => {
        const loaded = await live?.catch(() => undefined);
        await loaded?.settler.flush();
      },
    };
  },
});
