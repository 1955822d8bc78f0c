import type { NamespaceDefinition } from '../../mcp/namespace.ts';
import { NAMESPACE_INSTRUCTIONS } from './descriptions.ts';
import { createEventTools, type EventToolsOptions } from './tools.ts';

export function createEventNamespace(options: EventToolsOptions): NamespaceDefinition {
  return {
    name: 'event',
    title: 'Event bridge: publish and consume Kafka messages',
    version: '0.1.0',
    instructions: NAMESPACE_INSTRUCTIONS,
    tools: createEventTools(options),
  };
}
