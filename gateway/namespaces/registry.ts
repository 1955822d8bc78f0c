import type { Logger } from 'pino';
import type { GatewayConfig } from '../config.ts';
import type { NamespaceName } from '../core/namespace-names.ts';
import type { NamespaceDefinition } from '../mcp/model.ts';
import type { BrokerCalls } from './event/broker-calls.ts';
import { createEventNamespace } from './event/index.ts';
import { createGscNamespace } from './gsc/index.ts';
import { createMemoryNamespace } from './memory/index.ts';
import { createProductHuntNamespace } from './producthunt/index.ts';
import { createSkillsNamespace } from './skills/index.ts';

/**
 * What every namespace factory may use. Each namespace parses its own settings from `env`
 * (once, at start, with zod) so a missing credential never stops the gateway: the
 * namespace mounts and its tools report what is missing.
 */
export interface NamespaceDependencies {
  config: GatewayConfig;
  env: Readonly<Record<string, string | undefined>>;
  log: Logger;
  broker: BrokerCalls;
  defaultGroup?: string;
}

/**
 * One line per mounted namespace. A folder under gateway/namespaces/ that is not listed
 * here fails test/gateway/registry.test.ts, so nothing is written and forgotten; keyed by
 * NAMESPACE_NAMES, so a name without a factory, or a factory without a name, does not compile.
 */
export const NAMESPACE_FACTORIES: Record<
  NamespaceName,
  (deps: NamespaceDependencies) => NamespaceDefinition
> = {
  event: (deps) => createEventNamespace(deps),
  gsc: (deps) => createGscNamespace(deps),
  memory: (deps) => createMemoryNamespace(deps),
  producthunt: (deps) => createProductHuntNamespace(deps),
  skills: (deps) => createSkillsNamespace(deps),
};

export function mountNamespaces(deps: NamespaceDependencies): NamespaceDefinition[] {
  return Object.values(NAMESPACE_FACTORIES).map((factory) => factory(deps));
}
