import { z } from 'zod';
import type { NamespaceDefinition, NamespaceModel } from './model.ts';
import type { ToolDefinition } from './tool.ts';
import { createLegacyWire, type LegacyWire } from './wire/legacy.ts';
import { createModernWire, type ModernWire } from './wire/modern.ts';

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

/**
 * A namespace as the router holds it: compiled on its first request, so an idle gateway holds
 * none of its tools' schemas, descriptions or encoded listing (decision 0190). Concurrent
 * first requests share one compile; one that fails is tried again by the next request.
 */
export class NamespaceRoute {
  /** Set once the first compile finished; the request path reads it without awaiting. */
  compiled: CompiledNamespace | undefined;
  private compiling: Promise<CompiledNamespace> | undefined;

  constructor(
    readonly name: string,
    private readonly definition: () => Promise<NamespaceDefinition>,
  ) {}

  compile(): Promise<CompiledNamespace> {
    if (this.compiled) return Promise.resolve(this.compiled);
    this.compiling ??= this.definition().then(
      (definition) => {
        this.compiled = compileNamespace(definition);
        return this.compiled;
      },
      (error: unknown) => {
        this.compiling = undefined;
        throw error;
      },
    );
    return this.compiling;
  }

  /** An already compiled namespace (tests, and callers that build the definition themselves). */
  static of(compiled: CompiledNamespace): NamespaceRoute {
    const route = new NamespaceRoute(compiled.definition.name, async () => compiled.definition);
    route.compiled = compiled;
    return route;
  }
}
