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

/**
 * A result encoded once, with the end of the message after it: `,"result":<json>}`. Only
 * the message's start, which holds the id, is written per request.
 */
export class EncodedResult {
  readonly tail: Buffer;
  constructor(json: string) {
    this.tail = Buffer.from(`,"result":${json}}`);
  }
}

/**
 * Pre-encoded results (tools/list, server/discover) go out as two pieces, the id's part and
 * the encoded rest, so a large answer is neither re-encoded nor copied into a new buffer per request.
 */
export function resultResponse(id: JsonRpcId, result: string | EncodedResult): HttpResponse {
  const body =
    typeof result === 'string'
      ? `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`
      : [`{"jsonrpc":"2.0","id":${JSON.stringify(id)}`, result.tail];
  return { status: 200, headers: JSON_HEADERS, body };
}

/**
 * A tool result's content array, one text block: the bytes JSON.stringify([{ type: 'text', text }])
 * gives. `quoted` is JSON.stringify(text) when the caller has it already.
 */
export function textContent(text: string, quoted = JSON.stringify(text)): string {
  return `[{"type":"text","text":${quoted}}]`;
}

/** The tools/list entries a caller may see; `undefined` means all of them. */
export type ToolFilter = ((toolName: string) => boolean) | undefined;
