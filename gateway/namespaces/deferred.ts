/**
 * The contract's deferred form: a namespace builds its listing on its first request and loads
 * what its tools run on (stores, upstream clients, embedders) on the first call that needs
 * it. An idle gateway holds neither; one that answered `tools/list` holds the schemas it
 * answered from and none of the code behind them.
 */
import type { CapabilityReport, HealthReport, NamespaceParts } from '../mcp/namespace-contract.ts';
import type { ToolContext, ToolDefinition } from '../mcp/tool.ts';

/** The live parts a load builds: its tools are built already, by the load itself. */
export type LoadedParts = Omit<NamespaceParts, 'tools'> & { tools: ToolDefinition[] };

export interface DeferredNamespace {
  /** The namespace's name, for the error a failed load answers with. */
  name: string;
  /**
   * The tools as tools/list shows them, built by the same factory as the live ones so the
   * listing is the same bytes; their handlers are never run. Asked by the namespace's first
   * request, so the factory's module is imported here (`await import('./tools.ts')`).
   */
  listing(): Promise<ToolDefinition[]>;
  /** Imports and builds the live parts; run once, on the first call that needs them. */
  load(): Promise<LoadedParts>;
  /** Answers capabilities without loading, when the settings alone say it all (memory). */
  capabilities?(): Promise<CapabilityReport>;
  /**
   * Answers health before the parts are loaded (GET /readyz must not load them, or a probed
   * gateway would never idle lean); once loaded, the loaded parts' own health() answers.
   */
  healthBeforeLoad?(load: () => Promise<LoadedParts>): Promise<HealthReport>;
  /** The live parts have a backlog() to forward once loaded; before that it answers null. */
  hasBacklog?: boolean;
}

/**
 * NamespaceParts whose tools load the live parts on first call. Concurrent first calls share
 * one load; a load that fails answers every call waiting on it with an error naming the
 * namespace and the cause (logged by the tool runner with the request id), and the next call
 * tries again, so a store that was down at the first call is picked up once it is back.
 */
export function deferredParts(deferred: DeferredNamespace): NamespaceParts {
  let loading: Promise<Loaded> | undefined;
  let loaded: Loaded | undefined;
  const live = (): Promise<Loaded> => {
    if (loaded) return Promise.resolve(loaded);
    loading ??= deferred.load().then(
      (parts) => {
        loaded = { parts, tools: new Map(parts.tools.map((tool) => [tool.name, tool])) };
        return loaded;
      },
      (error: unknown) => {
        loading = undefined;
        throw new Error(`${deferred.name} could not be loaded: ${(error as Error)?.message ?? error}`, {
          cause: error,
        });
      },
    );
    return loading;
  };
  const forward = (listed: ToolDefinition): ToolDefinition => {
    // Once loaded, a call goes straight to the live handler: no extra async frame or await.
    let liveTool: ToolDefinition | undefined;
    const first = async (args: unknown, context: ToolContext) => {
      const tool = (await live()).tools.get(listed.name);
      if (!tool) throw new Error(`${deferred.name}: the loaded namespace has no tool ${listed.name}`);
      liveTool = tool;
      return tool.handler(args, context);
    };
    const forwarded: ToolDefinition = {
      ...listed,
      handler: (args, context) => (liveTool ? liveTool.handler(args, context) : first(args, context)),
    };
    // A tool that encodes its own output does so with the live tool's encoder; by the time an
    // output exists the live parts are loaded.
    if (listed.outputJson)
      forwarded.outputJson = (output) => {
        const tool = loaded?.tools.get(listed.name);
        return (tool?.outputJson ?? listed.outputJson!)(output);
      };
    return forwarded;
  };
  const health = deferred.healthBeforeLoad;
  return {
    tools: async () => (await deferred.listing()).map(forward),
    capabilities: deferred.capabilities ?? (async () => (await live()).parts.capabilities()),
    ...(health
      ? {
          health: () =>
            loaded?.parts.health ? loaded.parts.health() : health(async () => (await live()).parts),
        }
      : {}),
    ...(deferred.hasBacklog
      ? { backlog: async () => (loaded?.parts.backlog ? loaded.parts.backlog() : null) }
      : {}),
    async close() {
      // A load under way finishes first, so what it opened is closed too.
      const parts =
        loaded?.parts ??
        (loading
          ? await loading.then(
              (l) => l.parts,
              () => undefined,
            )
          : undefined);
      await parts?.close();
    },
  };
}

interface Loaded {
  parts: LoadedParts;
  tools: ReadonlyMap<string, ToolDefinition>;
}
