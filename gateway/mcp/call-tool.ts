/**
 * tools/call in the era-neutral tool model: find the tool, validate its arguments, run it,
 * and describe the outcome. The wire encoders decide how that outcome is written.
 */
import type { Logger } from 'pino';
import { z } from 'zod';
import type { NamespaceModel, ToolResult } from './model.ts';
import { isObject, JSON_RPC } from './protocol.ts';
import { type CallerIdentity, type ToolContext, ToolError } from './tool.ts';

export type CallOutcome =
  /** onWritten is set when the tool asked to hear whether its answer reached the caller. */
  | { kind: 'result'; result: ToolResult; onWritten?: (ok: boolean) => void }
  /** A protocol error (JSON-RPC error, not a tool result): the call named no tool that exists. */
  | { kind: 'error'; code: number; message: string };

export interface CallContext {
  caller: CallerIdentity;
  /**
   * The engine's request, whose `signal` is read only when a handler reads its own: engines
   * make the signal on demand. The object itself, not a closure over it, so no function is
   * made per call.
   */
  exchange: { readonly signal: AbortSignal };
  requestId: string;
  log: Logger;
}

function failed(text: string, code = 'tool_error'): CallOutcome {
  return { kind: 'result', result: { isError: true, text, code } };
}

/** What a handler is handed: a class, not a literal with a getter, so every call's has one shape. */
class HandlerContext implements ToolContext {
  readonly caller: CallerIdentity;
  readonly requestId: string;
  readonly delivered: Array<(ok: boolean) => void> = [];

  constructor(private readonly call: CallContext) {
    this.caller = call.caller;
    this.requestId = call.requestId;
  }

  /** Made only for a handler that reads it: most never do, and a signal costs an AbortController. */
  get signal(): AbortSignal {
    return this.call.exchange.signal;
  }

  /**
   * Handlers take it out of the context (`{ whenDelivered }`) and call it detached, so it is a
   * closure; made only for a handler that reads it (the group poll), not on every call.
   */
  get whenDelivered(): (callback: (delivered: boolean) => void) => void {
    const { delivered } = this;
    return (callback) => {
      delivered.push(callback);
    };
  }
}

export async function runToolCall(
  namespace: NamespaceModel,
  params: unknown,
  context: CallContext,
): Promise<CallOutcome> {
  if (!isObject(params) || typeof params.name !== 'string') {
    return { kind: 'error', code: JSON_RPC.INVALID_PARAMS, message: 'tools/call needs params.name (string)' };
  }
  const tool = namespace.tools.get(params.name);
  if (!tool) {
    return {
      kind: 'error',
      code: JSON_RPC.INVALID_PARAMS,
      message: `Unknown tool: ${params.name}. Call tools/list to see the tools of /${namespace.definition.name}/mcp.`,
    };
  }
  const parsed = tool.input.safeParse(params.arguments ?? {});
  if (!parsed.success)
    return failed(
      `Invalid arguments for ${tool.name}:\n${z.prettifyError(parsed.error)}`,
      'invalid_arguments',
    );

  // The clock is read and the log line built only when debug lines are written: both cost
  // more per call than most of the rest of the dispatch.
  const started = context.log.isLevelEnabled('debug') ? performance.now() : -1;
  const handlerContext = new HandlerContext(context);
  const { delivered } = handlerContext;
  try {
    const output = await tool.handler(parsed.data, handlerContext);
    if (started >= 0) logCall(context, tool.name, false, started);
    const encoded = tool.outputJson?.(output);
    const outcome: CallOutcome = {
      kind: 'result',
      result: encoded
        ? { isError: false, text: encoded.json, quoted: encoded.quoted, structured: output }
        : { isError: false, text: JSON.stringify(output), structured: output },
    };
    if (delivered.length > 0) outcome.onWritten = (ok) => runDelivered(delivered, ok, context);
    return outcome;
  } catch (error) {
    // Nothing of a failed call reaches the caller: whatever the handler registered hears so now.
    runDelivered(delivered, false, context);
    if (started >= 0) logCall(context, tool.name, true, started);
    if (error instanceof ToolError) return failed(error.message, error.code);
    context.log.error({ err: error, tool: tool.name, requestId: context.requestId }, 'tool handler failed');
    return failed(
      `${tool.name} failed unexpectedly (request ${context.requestId}); retry, or report the request id.`,
    );
  }
}

function logCall(context: CallContext, tool: string, isError: boolean, started: number): void {
  context.log.debug(
    {
      requestId: context.requestId,
      apiKeyId: context.caller.apiKeyId,
      tool,
      isError,
      ms: Math.round(performance.now() - started),
    },
    'tool call',
  );
}

function runDelivered(callbacks: Array<(ok: boolean) => void>, ok: boolean, context: CallContext): void {
  for (const callback of callbacks.splice(0)) {
    try {
      callback(ok);
    } catch (error) {
      context.log.error({ err: error, requestId: context.requestId }, 'delivery callback failed');
    }
  }
}
