/** JSON-RPC framing shared by both eras' encoders: a result or an error around an id. */
import type { HttpResponse } from '../../http/engine.ts';
import type { JsonRpcId } from '../protocol.ts';

export const JSON_HEADERS = { 'content-type': 'application/json' };

export function errorResponse(
  status: number,
  id: JsonRpcId | null,
  code: number,
  message: string,
  data?: unknown,
): HttpResponse {
  const error = data === undefined ? { code, message } : { code, message, data };
  return { status, headers: JSON_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id, error }) };
}

const RESULT_PREFIX = Buffer.from('{"jsonrpc":"2.0","id":');
const RESULT_MIDDLE = Buffer.from(',"result":');
const RESULT_SUFFIX = Buffer.from('}');

/** Pre-encoded results (tools/list, server/discover) are spliced as bytes, so a large answer is never re-encoded per request. */
export function resultResponse(id: JsonRpcId, result: string | Buffer): HttpResponse {
  const body =
    typeof result === 'string'
      ? `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`
      : Buffer.concat([RESULT_PREFIX, Buffer.from(JSON.stringify(id)), RESULT_MIDDLE, result, RESULT_SUFFIX]);
  return { status: 200, headers: JSON_HEADERS, body };
}

/** A tool result's content array, one text block: the bytes JSON.stringify([{ type: 'text', text }]) gives. */
export function textContent(text: string): string {
  return `[{"type":"text","text":${JSON.stringify(text)}}]`;
}

/** The tools/list entries a caller may see; `undefined` means all of them. */
export type ToolFilter = ((toolName: string) => boolean) | undefined;
