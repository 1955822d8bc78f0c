import type { NamespaceDefinition } from '../../mcp/namespace.ts';
import type { BrokerCalls } from './broker-calls.ts';
import { NAMESPACE_INSTRUCTIONS } from './descriptions.ts';
import { Provenance } from './provenance.ts';
import { loadKeyRing } from './signing-keys.ts';
import { createEventTools } from './tools.ts';

export interface EventNamespaceOptions {
  broker: BrokerCalls;
  defaultGroup?: string;
  /** Where the signing settings (EVENT_SIGNING_*) are read; none: records are stamped, not signed. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Throws a ConfigError naming the variable when a signing setting is bad, which stops the gateway. */
export function createEventNamespace({ env = {}, ...options }: EventNamespaceOptions): NamespaceDefinition {
  return {
    name: 'event',
    title: 'Event bridge: publish and consume Kafka messages',
    version: '0.1.0',
    instructions: NAMESPACE_INSTRUCTIONS,
    tools: createEventTools({ ...options, provenance: new Provenance(loadKeyRing(env)) }),
  };
}
