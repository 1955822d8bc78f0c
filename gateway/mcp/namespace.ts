import { z } from 'zod';
import type { ToolDefinition } from './tool.ts';
import { createLegacyWire, type LegacyWire } from './wire/legacy.ts';
import { createModernWire, type ModernWire } from './wire/modern.ts';

export interface NamespaceDefinition {
  /** URL segment: served at /{name}/mcp. */
  name: string;
  title: string;
  version: string;
  instructions: string;
  tools: ToolDefinition[];
  /** Releases what the namespace holds (stores, pools); called once when the gateway stops. */
  close?(): Promise<void>;
}

/** One tools/list entry, the same in every protocol era, serialized once. */
export interface ListedTool {
  name: string;
  json: string;
}

/**
 * The era-neutral model of a namespace: what it is, its tools and their listed form. Both
 * wire encoders are built from this one description, so a namespace written once as a
 * NamespaceDefinition speaks every protocol era without code of its own.
 */
export interface NamespaceModel {
  definition: NamespaceDefinition;
  tools: Map<string, ToolDefinition>;
  /** In definition order, which is the order tools/list answers in. */
  listed: ListedTool[];
  serverInfo: { name: string; title: string; version: string };
}

export interface CompiledNamespace extends NamespaceModel {
  legacy: LegacyWire;
  modern: ModernWire;
}

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return rest;
}

/** Does once, at start, everything a tools/list or tools/call would otherwise redo per request. */
export function compileNamespace(definition: NamespaceDefinition): CompiledNamespace {
  const tools = new Map<string, ToolDefinition>();
  for (const tool of definition.tools) {
    if (tools.has(tool.name)) throw new Error(`namespace ${definition.name}: duplicate tool ${tool.name}`);
    tools.set(tool.name, tool);
  }
  const listed = definition.tools.map((tool) => ({
    name: tool.name,
    json: JSON.stringify({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: jsonSchemaOf(tool.input, 'input'),
      outputSchema: jsonSchemaOf(tool.output, 'output'),
      annotations: { title: tool.title, ...tool.annotations },
    }),
  }));
  const model: NamespaceModel = {
    definition,
    tools,
    listed,
    serverInfo: {
      name: `mcp-event-gateway-${definition.name}`,
      title: definition.title,
      version: definition.version,
    },
  };
  return { ...model, legacy: createLegacyWire(model), modern: createModernWire(model) };
}
