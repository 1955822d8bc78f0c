import type { Logger } from 'pino';
import type { NamespaceDefinition } from '../../mcp/model.ts';
import type { BrokerCalls } from './broker-calls.ts';
import { NAMESPACE_INSTRUCTIONS } from './descriptions.ts';
import { LeaseSettler } from './lease-settler.ts';
import { Provenance } from './provenance.ts';
import { loadKeyRing } from './signing-keys.ts';
import { createEventTools } from './tools.ts';

export interface EventNamespaceOptions {
  broker: BrokerCalls;
  defaultGroup?: string;
  /** Where the signing settings (EVENT_SIGNING_*) are read; none: records are stamped, not signed. */
  env?: Readonly<Record<string, string | undefined>>;
  log?: Logger;
}

/** Throws a ConfigError naming the variable when a signing setting is bad, which stops the gateway. */
export function createEventNamespace({
  env = {},
  log,
  ...options
}: EventNamespaceOptions): NamespaceDefinition {
  const settler = new LeaseSettler(options.broker, (error) =>
    log?.debug(
      { err: (error as Error).message },
      'could not settle poll leases; the worker hands them out again',
    ),
  );
  return {
    name: 'event',
    title: 'Event bridge: publish and consume Kafka messages',
    version: '0.1.0',
    instructions: NAMESPACE_INSTRUCTIONS,
    tools: createEventTools({ ...options, provenance: new Provenance(loadKeyRing(env)), settler }),
    // Answers already written get their commits out before the worker link closes.
    close: () => settler.flush(),
  };
}
