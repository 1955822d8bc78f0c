import type { Logger } from 'pino';
import { z } from 'zod';
import type { HttpResponse } from '../http/engine.ts';
import type { CompiledNamespace } from './namespace.ts';
import {
  isSupportedProtocolVersion,
  JSON_RPC,
  type JsonRpcId,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from './protocol.ts';
import { type CallerIdentity, ToolError } from './tool.ts';

export interface McpPost {
  namespace: CompiledNamespace;
  body: Buffer;
  headers: Record<string, string>;
  caller: CallerIdentity;
  /** Read only by tool calls: engines make the signal on demand. */
  abortSignal(): AbortSignal;
  requestId: string;
  log: Logger;
}

const JSON_HEADERS = { 'content-type': 'application/json' };
const ACCEPTED: HttpResponse = { status: 202 };

function errorResponse(status: number, id: JsonRpcId | null, code: number, message: string): HttpResponse {
  return {
    status,
    headers: JSON_HEADERS,
    body: JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }),
  };
}

const RESULT_PREFIX = Buffer.from('{"jsonrpc":"2.0","id":');
const RESULT_MIDDLE = Buffer.from(',"result":');
const RESULT_SUFFIX = Buffer.from('}');

/** Pre-encoded results (tools/list) are spliced as bytes, so a large answer is never re-encoded per request. */
function resultResponse(id: JsonRpcId, result: string | Buffer): HttpResponse {
  const body =
    typeof result === 'string'
      ? `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`
      : Buffer.concat([RESULT_PREFIX, Buffer.from(JSON.stringify(id)), RESULT_MIDDLE, result, RESULT_SUFFIX]);
  return { status: 200, headers: JSON_HEADERS, body };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** MCP ids are strings or integers; an integer past 2^53 could not be echoed back unchanged. */
function isValidId(id: unknown): id is JsonRpcId {
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));
}

function toolErrorResult(message: string): string {
  return JSON.stringify({ content: [{ type: 'text', text: message }], isError: true });
}

async function callTool(id: JsonRpcId, params: unknown, post: McpPost): Promise<HttpResponse> {
  if (!isObject(params) || typeof params.name !== 'string') {
    return errorResponse(200, id, JSON_RPC.INVALID_PARAMS, 'tools/call needs params.name (string)');
  }
  const tool = post.namespace.tools.get(params.name);
  if (!tool) {
    return errorResponse(
      200,
      id,
      JSON_RPC.INVALID_PARAMS,
      `Unknown tool: ${params.name}. Call tools/list to see the tools of /${post.namespace.definition.name}/mcp.`,
    );
  }
  const parsed = tool.input.safeParse(params.arguments ?? {});
  if (!parsed.success) {
    return resultResponse(
      id,
      toolErrorResult(`Invalid arguments for ${tool.name}:\n${z.prettifyError(parsed.error)}`),
    );
  }
  const started = performance.now();
  const logCall = (isError: boolean) =>
    post.log.debug(
      {
        requestId: post.requestId,
        apiKeyId: post.caller.apiKeyId,
        tool: tool.name,
        isError,
        ms: Math.round(performance.now() - started),
      },
      'tool call',
    );
  const delivered: Array<(ok: boolean) => void> = [];
  try {
    const output = await tool.handler(parsed.data, {
      caller: post.caller,
      signal: post.abortSignal(),
      requestId: post.requestId,
      whenDelivered: (callback) => delivered.push(callback),
    });
    logCall(false);
    const response = resultResponse(
      id,
      JSON.stringify({
        content: [{ type: 'text', text: JSON.stringify(output) }],
        structuredContent: output,
      }),
    );
    if (delivered.length > 0) response.onWritten = (ok) => runDelivered(delivered, ok, post);
    return response;
  } catch (error) {
    runDelivered(delivered, false, post);
    logCall(true);
    if (error instanceof ToolError) return resultResponse(id, toolErrorResult(error.message));
    post.log.error({ err: error, tool: tool.name, requestId: post.requestId }, 'tool handler failed');
    return resultResponse(
      id,
      toolErrorResult(
        `${tool.name} failed unexpectedly (request ${post.requestId}); retry, or report the request id.`,
      ),
    );
  }
}

function runDelivered(callbacks: Array<(ok: boolean) => void>, ok: boolean, post: McpPost): void {
  for (const callback of callbacks.splice(0)) {
    try {
      callback(ok);
    } catch (error) {
      post.log.error({ err: error, requestId: post.requestId }, 'delivery callback failed');
    }
  }
}

function initializeResult(params: unknown, namespace: CompiledNamespace): string {
  const requested =
    isObject(params) && typeof params.protocolVersion === 'string' ? params.protocolVersion : '';
  const { definition } = namespace;
  return JSON.stringify({
    protocolVersion: isSupportedProtocolVersion(requested) ? requested : LATEST_PROTOCOL_VERSION,
    capabilities: { tools: { listChanged: false } },
    serverInfo: {
      name: `mcp-event-gateway-${definition.name}`,
      title: definition.title,
      version: definition.version,
    },
    instructions: definition.instructions,
  });
}

/** One POSTed JSON-RPC message of the stateless Streamable HTTP transport. */
export async function handleMcpPost(post: McpPost): Promise<HttpResponse> {
  const contentType = post.headers['content-type'];
  if (contentType !== undefined && !contentType.toLowerCase().includes('application/json')) {
    return errorResponse(415, null, JSON_RPC.INVALID_REQUEST, 'Content-Type must be application/json');
  }
  const headerVersion = post.headers['mcp-protocol-version'];
  if (headerVersion !== undefined && !isSupportedProtocolVersion(headerVersion)) {
    return errorResponse(
      400,
      null,
      JSON_RPC.INVALID_REQUEST,
      `Unsupported MCP-Protocol-Version: ${headerVersion.slice(0, 40)}. Supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`,
    );
  }

  let message: unknown;
  try {
    message = JSON.parse(post.body.toString('utf8'));
  } catch {
    return errorResponse(400, null, JSON_RPC.PARSE_ERROR, 'Parse error: the body is not valid JSON');
  }
  if (Array.isArray(message)) {
    return errorResponse(
      400,
      null,
      JSON_RPC.INVALID_REQUEST,
      'JSON-RPC batches are not supported: send one message per POST',
    );
  }
  if (!isObject(message) || message.jsonrpc !== '2.0') {
    return errorResponse(
      400,
      null,
      JSON_RPC.INVALID_REQUEST,
      'Invalid Request: expected a JSON-RPC 2.0 object',
    );
  }

  if (typeof message.method === 'string') {
    if (!('id' in message)) return ACCEPTED;
    if (!isValidId(message.id)) {
      return errorResponse(
        400,
        null,
        JSON_RPC.INVALID_REQUEST,
        'Invalid Request: id must be a string or an integer',
      );
    }
    const { id, params } = message;
    switch (message.method) {
      case 'initialize':
        return resultResponse(id, initializeResult(params, post.namespace));
      case 'ping':
        return resultResponse(id, '{}');
      case 'tools/list':
        return resultResponse(id, post.namespace.toolsListResult);
      case 'tools/call':
        return callTool(id, params, post);
      default:
        return errorResponse(
          200,
          id,
          JSON_RPC.METHOD_NOT_FOUND,
          `Method not found: ${message.method.slice(0, 100)}`,
        );
    }
  }
  if (isValidId(message.id) && ('result' in message || 'error' in message)) return ACCEPTED;
  return errorResponse(
    400,
    isValidId(message.id) ? message.id : null,
    JSON_RPC.INVALID_REQUEST,
    'Invalid Request: neither a request, a notification nor a response',
  );
}
