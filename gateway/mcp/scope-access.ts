/**
 * Key scopes applied to MCP traffic. Namespace and read-only rules answer the gateway's
 * access hooks (before the body on 2026-07-28 requests); topic rules need the parsed
 * arguments, so they run as a guard in front of each tool's handler, still before the
 * namespace sees anything. It sits in mcp/, beside the hooks it answers (access.ts); the
 * rules it applies are core/scopes.ts, which the store and the console read as well.
 */

import {
  authorizeArguments,
  authorizeNamespace,
  authorizeTool,
  type Decision,
  type KeyScopes,
  type ToolFacts,
  toolVisible,
} from '../core/scopes.ts';
import type { NamespaceDefinition } from './model.ts';
import type { NamespaceRoute } from './namespace.ts';
import { type CallerIdentity, ToolError } from './tool.ts';

export interface CallFacts {
  namespace: string;
  method: string;
  toolName?: string;
}

function unrestricted(scopes: KeyScopes): boolean {
  return (
    scopes.namespaces.includes('*') &&
    !scopes.readOnly &&
    scopes.publishTopics.includes('*') &&
    scopes.consumeTopics.includes('*')
  );
}

export function scopeAccess(namespaces: readonly NamespaceRoute[]) {
  const routes = new Map(namespaces.map((route) => [route.name, route]));
  // A filter is asked for only by tools/list, which the namespace's route compiled first.
  const toolsOf = (name: string): ReadonlyMap<string, ToolFacts> | undefined =>
    routes.get(name)?.compiled?.tools;

  return {
    /**
     * Refuses whole-namespace traffic (initialize, tools/list, ...) the key may not use.
     * Tool calls pass here and meet the guard in front of each tool instead, so their
     * refusal is a tool error (isError) naming the scope, which agents read and act on.
     */
    authorizeCall(caller: CallerIdentity, call: CallFacts): { status: number; message: string } | null {
      if (!caller.scopes || call.method === 'tools/call') return null;
      const decision: Decision = authorizeNamespace(caller.scopes, call.namespace);
      return decision.ok ? null : { status: 403, message: decision.message };
    },
    toolFilter(caller: CallerIdentity, namespace: string): ((toolName: string) => boolean) | undefined {
      const { scopes } = caller;
      if (!scopes || unrestricted(scopes)) return undefined;
      const tools = toolsOf(namespace);
      return (toolName) => {
        const tool = tools?.get(toolName);
        return tool !== undefined && toolVisible(scopes, namespace, tool);
      };
    },
  };
}

/** Wraps each tool so its scopes, argument-level ones (event topics) included, are checked before the handler runs. */
export function guardToolArguments(definition: NamespaceDefinition): NamespaceDefinition {
  return {
    ...definition,
    tools: definition.tools.map((tool) => ({
      ...tool,
      handler: (args, context) => {
        const scopes = context.caller.scopes;
        if (scopes) {
          // Namespace and read-only rules are checked again here, so a call is refused even
          // on a path that did not consult the access hooks.
          const byTool = authorizeTool(scopes, definition.name, tool);
          const decision = byTool.ok ? authorizeArguments(scopes, definition.name, tool.name, args) : byTool;
          if (!decision.ok) return Promise.reject(new ToolError('SCOPE_MISSING', decision.message));
        }
        return tool.handler(args, context);
      },
    })),
  };
}
