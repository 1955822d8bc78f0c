import type { z } from 'zod';
import type { KeyLimits } from '../core/key-limits.ts';
import type { KeyScopes } from '../core/scopes.ts';

/** Who is calling, as established by the gateway; never taken from tool arguments. */
export interface CallerIdentity {
  apiKeyId: string;
  /** What the key may do; absent means no limits (in-process callers, tests). */
  scopes?: KeyScopes;
  /** Quotas and poll caps; absent means none. */
  limits?: KeyLimits;
}

export interface ToolContext {
  caller: CallerIdentity;
  /** Aborted when the HTTP client goes away. */
  signal: AbortSignal;
  requestId: string;
  /**
   * Registers a callback run once the tool's answer was handed to the caller's connection
   * (`true`) or could not be (`false`, also when the handler throws). Tools that must not
   * commit work a caller never received (group polls) act on it.
   */
  whenDelivered?(callback: (delivered: boolean) => void): void;
}

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface ToolDefinition<In extends z.ZodType = z.ZodType, Out extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: In;
  output: Out;
  annotations: ToolAnnotations;
  handler(args: z.output<In>, context: ToolContext): Promise<z.output<Out>>;
  /**
   * The handler's output as JSON, for a tool whose output is mostly the same on every call
   * and can reuse that part's encoding. Without it the output is serialized with JSON.stringify.
   */
  outputJson?(output: z.output<Out>): OutputJson;
}

/** An output's JSON: `json` exactly as JSON.stringify(output) writes it, `quoted` exactly JSON.stringify(json). */
export interface OutputJson {
  json: string;
  quoted: string;
}

/** Keeps each tool's handler typed against its own schemas inside a heterogeneous list. */
export function defineTool<In extends z.ZodType, Out extends z.ZodType>(
  tool: ToolDefinition<In, Out>,
): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

/**
 * A failure the agent should read: becomes a tool result with `isError: true`. The message
 * says what went wrong and what to do next; `code` is stable for programs.
 */
export class ToolError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}
