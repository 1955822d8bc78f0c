/**
 * The namespace contract: what every namespace under gateway/namespaces/ implements, and the
 * one place that says so. A namespace is a folder whose index.ts exports one
 * `defineNamespace({...})`; the registry lists it on one line and mounts it with
 * mountNamespace() (namespace-mount.ts), which parses its settings, serves its
 * `<name>_capabilities` tool and refuses its tools while a setting is bad.
 */
import { z } from 'zod';
import type { ToolDefinition } from './tool.ts';

/** The process environment, or the part of it a test hands over. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * What a namespace says about itself "right now"; the contract turns it into the one
 * capabilities shape (capabilitiesOutput in namespace-mount.ts) every namespace answers with.
 */
export interface CapabilityReport {
  /** The tools can do their work now. */
  ready: boolean;
  /** The settings the tools need are present (whether the far side accepts them is another matter). */
  configured: boolean;
  /** Where credentials came from (a setting name or a file path), never their value. */
  authSource?: string | null;
  /** Settings that must be set for the tools to work. */
  missingSettings?: string[];
  /** Everything wrong right now, each naming the setting or the dependency to fix. */
  problems?: string[];
  /** Non-secret settings in effect (base URLs, gates, defaults). */
  settings?: Record<string, unknown>;
  notes?: string[];
  /** What only this namespace has to say (event: the worker and broker; skills: providers). */
  details?: Record<string, unknown>;
}

/** What health() answers: feeds GET /readyz when `ok` can be false for a reason an operator acts on. */
export interface HealthReport {
  ok: boolean;
  /** Why not, naming the dependency; never a secret. */
  detail?: string;
}

/** What a namespace's create() returns: its tools and the three questions the gateway asks it. */
export interface NamespaceParts {
  /**
   * The tools, in the order tools/list answers; `<name>_capabilities` is added in front by the
   * contract. Asked once, by the namespace's first request, not at start: the modules that
   * build them (their zod schemas and descriptions) stay unloaded in an idle gateway.
   */
  tools(): Promise<ToolDefinition[]>;
  /**
   * Asked on each `<name>_capabilities` call; may ask a dependency, under that call's own
   * deadline. It gets no abort signal: the question is short, and a signal per call cost
   * more than the event namespace's whole status question.
   */
  capabilities(): Promise<CapabilityReport>;
  /**
   * Whether what the namespace holds is reachable (the memory store); GET /readyz asks it of
   * every namespace that has one. Left out where there is nothing of the namespace's own to
   * reach: a missing credential is not ill health (the tools answer and say what to set),
   * and the broker worker has its own readiness check.
   */
  health?(): Promise<HealthReport>;
  /**
   * Work the namespace has queued and not yet done (memory: memories waiting for their
   * embedding), for the `mcp_namespace_backlog` gauge; null while it cannot tell without
   * loading what it would count (a scrape must not load a deferred namespace).
   */
  backlog?(): Promise<number | null>;
  /** Releases what it holds (stores, pools, timers); called once when the gateway stops. */
  close(): Promise<void>;
}

/**
 * One namespace, as its author writes it. `Schema` parses the environment (string values;
 * empty ones count as unset) and must parse an empty environment, so that with any bad
 * setting left out the namespace can still be built and list its tools. `Deps` is what the
 * registry hands every namespace (the gateway config, the broker link, the log).
 */
export interface NamespaceContract<Schema extends z.ZodType = z.ZodType, Deps = never> {
  /** URL segment: served at /{name}/mcp; tool names start with `${name}_`. */
  name: string;
  title: string;
  version: string;
  instructions: string;
  settings: Schema;
  /** Stable codes this namespace's tools answer with, beside the contract's own (COMMON_ERROR_CODES). */
  errorCodes: Readonly<Record<string, string>>;
  create(settings: z.output<Schema>, deps: Deps): NamespaceParts;
}

/** Keeps `create` typed against the namespace's own schema. */
export function defineNamespace<Schema extends z.ZodType, Deps>(
  contract: NamespaceContract<Schema, Deps>,
): NamespaceContract<Schema, Deps> {
  return contract;
}

/**
 * Codes any tool may answer with, whatever its namespace: raised by the contract, the tool
 * runner, the key scopes and the key limits. Namespaces add their own in `errorCodes`.
 */
export const COMMON_ERROR_CODES: Readonly<Record<string, string>> = {
  SETTINGS_INVALID:
    "A setting of this namespace is missing or malformed; the message names it. Fix it in the gateway's environment and restart.",
  invalid_arguments: 'The arguments do not match the tool input schema; the message says which.',
  tool_error: 'The tool failed unexpectedly; the message carries a request id to report.',
  SCOPE_MISSING: 'The API key may not make this call; the message names the scope.',
  quota_exceeded: "The key's daily quota for this namespace or tool is spent; retry after 00:00 UTC.",
  too_many_polls: 'The key already has as many event_consume calls waiting as it may.',
};

function isHttpUrl(raw: string): boolean {
  try {
    const url = new URL(raw);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Builders for settings read from the environment. Each keeps the value a string, as the
 * environment gave it, so a namespace's own loader reads the parsed object like `env`.
 */
export const envSetting = {
  /** An http(s) base URL. */
  url: () => z.string().trim().refine(isHttpUrl, 'must be an http(s) URL'),
  /** A whole number from `min` to `max`. */
  int: (min: number, max: number) =>
    z
      .string()
      .trim()
      .refine(
        (raw) => /^-?\d+$/.test(raw) && Number(raw) >= min && Number(raw) <= max,
        `must be an integer from ${min} to ${max}`,
      ),
  /** One of `values`, in any letter case. */
  oneOf: <const T extends readonly [string, ...string[]]>(values: T) =>
    z
      .string()
      .trim()
      .toLowerCase()
      .refine((raw) => values.includes(raw), `must be one of ${values.join(', ')}`),
  /** Free text: a token, a path, a list. */
  text: () => z.string(),
};
