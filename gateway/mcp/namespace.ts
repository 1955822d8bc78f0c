import { z } from 'zod';
import type { ToolDefinition } from './tool.ts';

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

export interface CompiledNamespace {
  definition: NamespaceDefinition;
  tools: Map<string, ToolDefinition>;
  /** The `result` of tools/list, serialized and encoded once at start. */
  toolsListResult: Buffer;
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
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchemaOf(tool.input, 'input'),
    outputSchema: jsonSchemaOf(tool.output, 'output'),
    annotations: { title: tool.title, ...tool.annotations },
  }));
  return { definition, tools, toolsListResult: Buffer.from(JSON.stringify({ tools: listed })) };
}
