/**
 * Mounting a namespace the one way every namespace is mounted: its settings parsed from the
 * environment with its own zod schema, its tools refused (SETTINGS_INVALID, naming the
 * setting) while a setting is bad, and one `<name>_capabilities` tool in front, answering in
 * one shape whatever the namespace.
 */
import { z } from 'zod';
import { capabilitiesJson, type FixedJson, fixedJson } from './capabilities-splice.ts';
import type { NamespaceDefinition } from './model.ts';
import {
  COMMON_ERROR_CODES,
  type Env,
  type HealthReport,
  type NamespaceContract,
  type NamespaceParts,
} from './namespace-contract.ts';
import { defineTool, type ToolDefinition, ToolError } from './tool.ts';

/**
 * A namespace as the gateway holds it: the MCP definition, whose tools are built when first
 * asked for (the namespace's first request), plus the contract's questions.
 */
export interface MountedNamespace extends Omit<NamespaceDefinition, 'tools'> {
  /** `<name>_capabilities` and the namespace's own tools, refused while a setting is bad. */
  tools(): Promise<ToolDefinition[]>;
  /** Present when the namespace has something of its own to reach (see NamespaceParts.health). */
  health?(): Promise<HealthReport>;
  /** Present when the namespace queues work of its own (see NamespaceParts.backlog). */
  backlog?(): Promise<number | null>;
  close(): Promise<void>;
  /** One line per bad setting, naming it and what is wrong (never its value); empty when all parsed. */
  settingsProblems: string[];
}

export interface ParsedSettings<T> {
  /** Absent only when even the schema's defaults do not parse (a contract bug the contract suite catches). */
  settings?: T;
  problems: string[];
}

const ONCE = { jitless: true } as const;

/**
 * Parses `env` with `schema`, empty values counting as unset. A bad setting is reported by
 * name, and parsing is retried without it, so the namespace is built on its defaults.
 */
export function parseSettings<S extends z.ZodType>(schema: S, env: Env): ParsedSettings<z.output<S>> {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  // Parsed once, at start: zod's compiled fast path would be built, and kept, for this parse.
  const first = schema.safeParse(present, ONCE);
  if (first.success) return { settings: first.data, problems: [] };
  const problems = first.error.issues.map(
    (issue) => `${issue.path.length ? issue.path.join('.') : '(settings)'}: ${issue.message}`,
  );
  const bad = new Set(first.error.issues.map((issue) => String(issue.path[0])));
  const rest = Object.fromEntries(Object.entries(present).filter(([name]) => !bad.has(name)));
  const second = schema.safeParse(rest, ONCE);
  return second.success ? { settings: second.data, problems } : { problems };
}

const capabilityTool = z.object({
  name: z.string(),
  title: z.string(),
  read_only: z.boolean(),
  destructive: z.boolean(),
});

/** The one capabilities shape: the same fields for every namespace; `details` is the namespace's own. */
export const capabilitiesOutput = z.object({
  namespace: z.string(),
  version: z.string(),
  ready: z.boolean(),
  configured: z.boolean(),
  auth_source: z.string().nullable(),
  missing_settings: z.array(z.string()),
  problems: z.array(z.string()),
  settings: z.record(z.string(), z.unknown()),
  notes: z.array(z.string()),
  tools: z.array(capabilityTool),
  error_codes: z.array(z.object({ code: z.string(), meaning: z.string() })),
  details: z.record(z.string(), z.unknown()),
});

export type Capabilities = z.output<typeof capabilitiesOutput>;

/** The part of a capabilities answer that is the same on every call, and its encodings. */
interface FixedPart {
  tools: Capabilities['tools'];
  errorCodes: Capabilities['error_codes'];
  encoded: FixedJson;
}

function capabilitiesTool(
  contract: NamespaceContract<z.ZodType, never>,
  parts: NamespaceParts,
  settingsProblems: string[],
  tools: () => ToolDefinition[],
): ToolDefinition {
  const { name } = contract;
  const codes = { ...COMMON_ERROR_CODES, ...contract.errorCodes };
  let fixedPart: FixedPart | undefined;
  // Built on the first call: the tool list is complete only once the namespace is mounted.
  const fixed = (): FixedPart => {
    if (fixedPart) return fixedPart;
    // Frozen, items too: every answer hands out these same arrays, so no reader may change
    // them (their JSON is made once, below, and would no longer match).
    const catalogue = Object.freeze(
      tools().map((tool) =>
        Object.freeze({
          name: tool.name,
          title: tool.title,
          read_only: tool.annotations.readOnlyHint === true,
          destructive: tool.annotations.destructiveHint === true,
        }),
      ),
    ) as Capabilities['tools'];
    const errorCodes = Object.freeze(
      Object.entries(codes).map(([code, meaning]) => Object.freeze({ code, meaning })),
    ) as Capabilities['error_codes'];
    fixedPart = { tools: catalogue, errorCodes, encoded: fixedJson(catalogue, errorCodes) };
    return fixedPart;
  };
  return defineTool({
    name: `${name}_capabilities`,
    title: `${contract.title.split(':')[0]} capabilities`,
    description: `Reports whether ${name} is ready, what is missing or wrong (naming the setting to fix), the non-secret settings in effect, the tool catalogue and the error codes its tools answer with. Never returns a secret. Call it first when another ${name} tool fails.`,
    input: z.object({}).strict(),
    output: capabilitiesOutput,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    async handler(): Promise<Capabilities> {
      const report = await parts.capabilities();
      const { tools: catalogue, errorCodes } = fixed();
      return {
        namespace: name,
        version: contract.version,
        ready: report.ready && settingsProblems.length === 0,
        configured: report.configured && settingsProblems.length === 0,
        auth_source: report.authSource ?? null,
        missing_settings: report.missingSettings ?? [],
        problems: [...settingsProblems, ...(report.problems ?? [])],
        settings: report.settings ?? {},
        notes: report.notes ?? [],
        tools: catalogue,
        error_codes: errorCodes,
        details: report.details ?? {},
      };
    },
    // The catalogue and the error codes, over half of the text, are encoded once and spliced
    // into each answer and its quoted copy (capabilities-splice.ts, decision 0902).
    outputJson: (output) => capabilitiesJson(output, fixed().encoded),
  });
}

/** The same tool, answering SETTINGS_INVALID before anything of the namespace runs. */
function refused(tool: ToolDefinition, message: string): ToolDefinition {
  return { ...tool, handler: () => Promise.reject(new ToolError('SETTINGS_INVALID', message)) };
}

/** Parts for a namespace that could not be built at all: no tools but capabilities, which says why. */
const NOTHING: NamespaceParts = {
  tools: async () => [],
  capabilities: async () => ({ ready: false, configured: false }),
  close: async () => {},
};

/**
 * Builds one namespace. Never throws for a setting: a bad one is logged once by the caller
 * (from `settingsProblems`), reported by `<name>_capabilities`, and answered by every other
 * tool as SETTINGS_INVALID naming it.
 */
export function mountNamespace<Schema extends z.ZodType, Deps>(
  contract: NamespaceContract<Schema, Deps>,
  env: Env,
  deps: Deps,
): MountedNamespace {
  const { settings, problems } = parseSettings(contract.settings, env);
  const parts = settings === undefined ? NOTHING : contract.create(settings, deps);
  const message = `${contract.name} is not usable until its settings are fixed: ${problems.join('; ')}. Set them in the gateway's environment and restart; ${contract.name}_capabilities shows the problem.`;
  const generic = contract as unknown as NamespaceContract<z.ZodType, never>;
  const tools = async (): Promise<ToolDefinition[]> => {
    const built = await parts.tools();
    const own = problems.length ? built.map((tool) => refused(tool, message)) : built;
    const all: ToolDefinition[] = [];
    all.push(
      capabilitiesTool(generic, parts, problems, () => all),
      ...own,
    );
    return all;
  };
  return {
    name: contract.name,
    title: contract.title,
    version: contract.version,
    instructions: contract.instructions,
    tools,
    ...(parts.health ? { health: parts.health.bind(parts) } : {}),
    ...(parts.backlog ? { backlog: parts.backlog.bind(parts) } : {}),
    close: () => parts.close(),
    settingsProblems: problems,
  };
}

/** The namespace's MCP definition with its tools built: what compileNamespace takes. */
export async function mountedDefinition(mounted: MountedNamespace): Promise<NamespaceDefinition> {
  return { ...mounted, tools: await mounted.tools() };
}
