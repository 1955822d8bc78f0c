/**
 * The Streamable HTTP transport's media-type rules for a POST, checked from headers alone
 * (before the body is read): the body must be declared as JSON, and the client must accept
 * both answers a server may give, application/json and text/event-stream.
 */
import type { HttpResponse } from '../http/engine.ts';
import { JSON_RPC } from './protocol.ts';

function refusal(status: 406 | 415, message: string): HttpResponse {
  return {
    status,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: JSON_RPC.INVALID_REQUEST, message } }),
  };
}

/** `application/json; charset=utf-8` → `application/json`; parameters are allowed, the type must match exactly. */
function mediaType(value: string): string {
  return (value.split(';', 1)[0] ?? '').trim().toLowerCase();
}

/** True when some range of the Accept header covers `type` with a non-zero weight. */
function accepts(accept: string, type: string): boolean {
  const [major] = type.split('/');
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.split(';').map((item) => item.trim().toLowerCase());
    const q = params.find((param) => param.startsWith('q='));
    if (q !== undefined && !(Number(q.slice(2)) > 0)) continue;
    if (range === type || range === '*/*' || range === `${major}/*`) return true;
  }
  return false;
}

/**
 * Verdicts of header strings already seen. A client sends the same two strings on every
 * request, and parsing them was 6% of a tools/list; only a string that passed is cached
 * (a refusal quotes it, so it is answered fresh), and a set is emptied when full, so odd
 * strings cannot grow it.
 */
const MAX_REMEMBERED = 256;
const goodContentTypes = new Set<string>();
const goodAccepts = new Set<string>();

function remember(set: Set<string>, value: string): void {
  if (set.size >= MAX_REMEMBERED) set.clear();
  set.add(value);
}

/** A 415 or 406 answer when the headers break the transport's rules, otherwise null. */
export function checkMediaTypes(headers: Record<string, string>): HttpResponse | null {
  const contentType = headers['content-type'];
  const accept = headers.accept;
  if (
    contentType !== undefined &&
    accept !== undefined &&
    goodContentTypes.has(contentType) &&
    goodAccepts.has(accept)
  ) {
    return null;
  }
  if (contentType === undefined || mediaType(contentType) !== 'application/json') {
    return refusal(
      415,
      `Content-Type must be application/json (parameters such as charset are allowed); got ${
        contentType === undefined ? 'none' : JSON.stringify(contentType.slice(0, 100))
      }`,
    );
  }
  remember(goodContentTypes, contentType);
  if (accept === undefined || !accepts(accept, 'application/json') || !accepts(accept, 'text/event-stream')) {
    return refusal(
      406,
      `Accept must allow both application/json and text/event-stream (send "Accept: application/json, text/event-stream"); got ${
        accept === undefined ? 'none' : JSON.stringify(accept.slice(0, 100))
      }`,
    );
  }
  remember(goodAccepts, accept);
  return null;
}
