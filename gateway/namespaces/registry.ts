import type { NamespaceDefinition } from '../mcp/namespace.ts';
import type { BrokerCalls } from './event/broker-calls.ts';
import { createEventNamespace } from './event/index.ts';

export interface NamespaceDependencies {
  broker: BrokerCalls;
  defaultGroup?: string;
}

/**
 * One line per mounted namespace. A folder under gateway/namespaces/ that is not listed
 * here fails test/gateway/registry.test.ts, so nothing is written and forgotten.
 */
export const NAMESPACE_FACTORIES: Record<string, (deps: NamespaceDependencies) => NamespaceDefinition> = {
  event: (deps) => createEventNamespace(deps),
};

export function mountNamespaces(deps: NamespaceDependencies): NamespaceDefinition[] {
  return Object.values(NAMESPACE_FACTORIES).map((factory) => factory(deps));
}
