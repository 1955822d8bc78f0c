/**
 * One POSTed JSON-RPC message on a namespace endpoint. The classifier picks the era, the
 * access hook is consulted, then the message is dispatched to that era's methods and
 * answered by that era's encoder. Tool calls run through the one era-neutral tool model.
 */
import type { Logger } from 'pino';
import type { HttpResponse } from '../http/engine.ts';
import type { AccessHooks, CallDescription, CallRefusal } from './access.ts';
import { type CallOutcome, runToolCall } from './call-tool.ts';
import { classifyRequest } from './classify.ts';
import type { CompiledNamespace } from './namespace.ts';
import {
  isLegacyVersion,
  isModernVersion,
  isObject,
  isValidId,
  JSON_RPC,
  type JsonRpcId,
  LEGACY_PROTOCOL_VERSIONS,
} from './protocol.ts';
import type { CallerIdentity } from './tool.ts';
import { errorResponse } from './wire/json-rpc.ts';

export interface McpPost {
  namespace: CompiledNamespace;
  /** The body, decoded (and checked to be well-formed text) by the caller. */
  text: string;
  headers: Record<string, string>;
  caller: CallerIdentity;
  /** Its `signal` is read only by tool calls: engines make the signal on demand. */
  exchange: { readonly signal: AbortSignal };
  requestId: string;
  log: Logger;
  access: AccessHooks;
  /** The call a 2026-07-28 request's headers named, already allowed by the access hook before the body was read. */
  allowedFromHeaders?: CallDescription;
  /** Filled in as the message is understood: what metrics and the audit trail record. */
  note?: CallNote;
}

/** What a request turned out to be; null fields were never learnt (a body that did not parse). */
export interface CallNote {
  method: string | null;
  /** The tool a tools/call named, cut to 100 characters; `knownTool` says whether it exists. */
  tool: string | null;
  knownTool: boolean;
  /** Set when the answer says more than its HTTP status (a tool error, a refusal, an in-band error). */
  outcome: 'ok' | 'error' | 'denied' | 'rate_limited' | 'quota_exceeded' | null;
  errorCode: string | null;
}

export function emptyNote(): CallNote {
  return { method: null, tool: null, knownTool: false, outcome: null, errorCode: null };
}

/** Tool error codes that are refusals of a limit rather than failures of the tool. */
const LIMIT_CODES: Record<string, CallNote['outcome']> = {
  quota_exceeded: 'quota_exceeded',
  too_many_polls: 'rate_limited',
};

function noteOutcome(note: CallNote | undefined, outcome: CallOutcome): void {
  if (!note) return;
  if (outcome.kind === 'error') {
    note.outcome = 'error';
    note.errorCode = note.knownTool ? 'invalid_params' : 'unknown_tool';
  } else if (outcome.result.isError) {
    const code = outcome.result.code ?? 'tool_error';
    note.outcome = LIMIT_CODES[code] ?? 'error';
    note.errorCode = code;
  } else {
    note.outcome = 'ok';
  }
}

const ACCEPTED: HttpResponse = { status: 202 };

function toolNameOf(method: string, params: unknown): string | undefined {
  return method === 'tools/call' && isObject(params) && typeof params.name === 'string'
    ? params.name
    : undefined;
}

/** The engine reports whether the answer reached the caller's connection; tools waiting on that hear it. */
function withDelivery(response: HttpResponse, outcome: CallOutcome): HttpResponse {
  if (outcome.kind === 'result' && outcome.onWritten) response.onWritten = outcome.onWritten;
  return response;
}

/** tools/call in either era: one tool model, the era's encoder. */
async function answerToolCall(
  id: JsonRpcId,
  params: unknown,
  post: McpPost,
  wire: Pick<McpPost['namespace']['legacy' | 'modern'], 'toolResult'>,
): Promise<HttpResponse> {
  const outcome = await runToolCall(post.namespace, params, post);
  noteOutcome(post.note, outcome);
  // An unknown tool is answered in-band (HTTP 200) in both eras, as the reference SDK does.
  if (outcome.kind === 'error') return errorResponse(200, id, outcome.code, outcome.message);
  return withDelivery(wire.toolResult(id, outcome.result), outcome);
}

/** tools/list and tools/call are answered alike in both eras but for the encoder; the rest per era. */
function dispatch(
  id: JsonRpcId,
  method: string,
  params: unknown,
  post: McpPost,
  modern: boolean,
): HttpResponse | Promise<HttpResponse> {
  const wire = modern ? post.namespace.modern : post.namespace.legacy;
  if (method === 'tools/list') {
    return wire.toolsList(id, post.access.toolFilter?.(post.caller, post.namespace.definition.name));
  }
  if (method === 'tools/call') return answerToolCall(id, params, post, wire);
  return modern ? otherModern(id, method, post) : otherLegacy(id, method, params, post);
}

function otherLegacy(id: JsonRpcId, method: string, params: unknown, post: McpPost): HttpResponse {
  const wire = post.namespace.legacy;
  if (method === 'initialize') return wire.initialize(id, params);
  if (method === 'ping') return wire.ping(id);
  if (post.note) post.note.outcome = 'error';
  return errorResponse(200, id, JSON_RPC.METHOD_NOT_FOUND, `Method not found: ${method.slice(0, 100)}`);
}

function otherModern(id: JsonRpcId, method: string, post: McpPost): HttpResponse {
  if (method === 'server/discover') return post.namespace.modern.discover(id);
  // initialize and ping included: the 2026-07-28 protocol has neither.
  return errorResponse(
    404,
    id,
    JSON_RPC.METHOD_NOT_FOUND,
    `Method not found in protocol 2026-07-28: ${method.slice(0, 100)}. This namespace serves server/discover, tools/list and tools/call.`,
  );
}

/** A refused call; the id is null when the refusal came from headers, before the body was read. */
export function refusalResponse(refusal: CallRefusal, id: JsonRpcId | null = null): HttpResponse {
  return errorResponse(refusal.status ?? 403, id, JSON_RPC.CALL_REFUSED, refusal.message);
}

function sameCall(a: CallDescription | undefined, b: CallDescription): boolean {
  return a !== undefined && a.method === b.method && a.toolName === b.toolName;
}

/** One POSTed JSON-RPC message of the stateless Streamable HTTP transport, in either era. */
export async function handleMcpPost(post: McpPost): Promise<HttpResponse> {
  const contentType = post.headers['content-type'];
  if (contentType !== undefined && !contentType.toLowerCase().includes('application/json')) {
    return errorResponse(415, null, JSON_RPC.INVALID_REQUEST, 'Content-Type must be application/json');
  }

  let message: unknown;
  try {
    message = JSON.parse(post.text);
  } catch {
    return errorResponse(400, null, JSON_RPC.PARSE_ERROR, 'Parse error: the body is not valid JSON');
  }
  // isObject is false for an array, so a batch is refused here too, with its own message.
  if (!isObject(message) || message.jsonrpc !== '2.0') return notJsonRpcObject(message);
  if (typeof message.method !== 'string' || !('id' in message)) return answerNonRequest(message, post);
  if (!isValidId(message.id)) {
    return errorResponse(
      400,
      null,
      JSON_RPC.INVALID_REQUEST,
      'Invalid Request: id must be a string or an integer',
    );
  }

  const { id, method, params } = message as { id: JsonRpcId; method: string; params?: unknown };
  if (post.note) noteRequest(post.note, method, params, post.namespace);
  const era = classifyRequest({ method, params }, post.headers);
  if (post.log.isLevelEnabled('debug')) logRequest(post, era.era, method);
  if (era.era === 'reject')
    return errorResponse(era.status, era.echoId ? id : null, era.code, era.message, era.data);

  if (post.access.authorizeCall) {
    const refusal = callRefusal(post, era.era === 'modern', method, params, id);
    if (refusal) return refusal;
  }
  return dispatch(id, method, params, post, era.era === 'modern');
}

/** The answer to a body that parsed but is not one JSON-RPC 2.0 object. */
function notJsonRpcObject(message: unknown): HttpResponse {
  if (Array.isArray(message)) {
    return errorResponse(
      400,
      null,
      JSON_RPC.INVALID_REQUEST,
      'JSON-RPC batches are not supported: send one message per POST',
    );
  }
  return errorResponse(
    400,
    null,
    JSON_RPC.INVALID_REQUEST,
    'Invalid Request: expected a JSON-RPC 2.0 object',
  );
}

/** A notification or a response: accepted in either era, or refused when it is neither. */
function answerNonRequest(message: Record<string, unknown>, post: McpPost): HttpResponse {
  // Only a version header neither era knows is refused.
  const headerVersion = post.headers['mcp-protocol-version'];
  if (
    headerVersion !== undefined &&
    !isLegacyVersion(headerVersion) &&
    !isModernVersion(headerVersion.trim())
  ) {
    return errorResponse(
      400,
      null,
      JSON_RPC.INVALID_REQUEST,
      `Unsupported MCP-Protocol-Version: ${headerVersion.slice(0, 40)}. Supported: ${LEGACY_PROTOCOL_VERSIONS.join(', ')}`,
    );
  }
  if (typeof message.method === 'string') {
    if (post.note) post.note.method = message.method;
    return ACCEPTED;
  }
  if (isValidId(message.id) && ('result' in message || 'error' in message)) return ACCEPTED;
  return errorResponse(
    400,
    isValidId(message.id) ? message.id : null,
    JSON_RPC.INVALID_REQUEST,
    'Invalid Request: neither a request, a notification nor a response',
  );
}

/** Records the method, and for tools/call which tool and whether this namespace has it. */
function noteRequest(note: CallNote, method: string, params: unknown, namespace: CompiledNamespace): void {
  note.method = method;
  const tool = toolNameOf(method, params);
  if (tool !== undefined) {
    note.tool = tool.slice(0, 100);
    note.knownTool = namespace.tools.has(tool);
  }
}

function logRequest(post: McpPost, era: string, method: string): void {
  post.log.debug(
    {
      requestId: post.requestId,
      namespace: post.namespace.definition.name,
      era,
      method: method.slice(0, 100),
    },
    'mcp request',
  );
}

/** The access hook's refusal of this call, answered; undefined when the call may go on. */
function callRefusal(
  post: McpPost,
  modern: boolean,
  method: string,
  params: unknown,
  id: JsonRpcId,
): HttpResponse | undefined {
  const { authorizeCall } = post.access;
  if (!authorizeCall) return undefined;
  const call: CallDescription = {
    namespace: post.namespace.definition.name,
    method,
    toolName: toolNameOf(method, params),
  };
  // A modern request reaching here had its headers confirmed equal to the body, so the
  // decision taken from them before the body was read stands; anything else is asked now.
  if (modern && sameCall(post.allowedFromHeaders, call)) return undefined;
  const refusal = authorizeCall(post.caller, call);
  if (!refusal) return undefined;
  if (post.note) {
    post.note.outcome = 'denied';
    post.note.errorCode = 'forbidden';
  }
  return refusalResponse(refusal, id);
}
