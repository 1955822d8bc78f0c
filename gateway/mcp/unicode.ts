/**
 * Strict text: a body that is not valid UTF-8, or a JSON string holding a lone UTF-16
 * surrogate (a `\ud800` escape with no partner), is refused instead of being turned into
 * U+FFFD and passed on (published, stored) as something the caller never sent.
 */
import { isUtf8 } from 'node:buffer';
import type { HttpResponse } from '../http/engine.ts';
import { JSON_RPC } from './protocol.ts';

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = (text: string) => !LONE_SURROGATE.test(text);

/** Only bodies with a surrogate escape need the deeper look. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

function parseError(message: string): HttpResponse {
  return {
    status: 400,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: JSON_RPC.PARSE_ERROR, message } }),
  };
}

/** Where in the value a string (or key) is not well-formed, e.g. `params.arguments.value`; null if none. */
function findLoneSurrogate(value: unknown, path: string): string | null {
  if (typeof value === 'string') return wellFormed(value) ? null : path;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const found = findLoneSurrogate(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (!wellFormed(key)) return `${path ? `${path}.` : ''}(a key)`;
      const found = findLoneSurrogate(item, path ? `${path}.${key}` : key);
      if (found) return found;
    }
  }
  return null;
}

/**
 * The body's text, or a 400 answer naming the problem when it is not well-formed text. The
 * text is decoded here once, for the JSON-RPC layer to parse.
 */
export function bodyText(body: Buffer): { text: string } | { refusal: HttpResponse } {
  if (!isUtf8(body)) {
    return {
      refusal: parseError(
        'Parse error: the body is not valid UTF-8. Send the JSON encoded as UTF-8 (invalid bytes are refused, not replaced).',
      ),
    };
  }
  const text = body.toString('utf8');
  const refusal = loneSurrogateRefusal(text);
  return refusal ? { refusal } : { text };
}

/** A 400 answer when a string in the JSON text escapes a lone surrogate, else null. */
function loneSurrogateRefusal(text: string): HttpResponse | null {
  if (!SURROGATE_ESCAPE.test(text)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null; // the JSON-RPC layer reports the syntax error
  }
  const where = findLoneSurrogate(parsed, '');
  if (where === null) return null;
  return parseError(
    `Parse error: the string at ${where || 'the top level'} holds a lone UTF-16 surrogate (an escape such as \\ud800 without its pair), which is not Unicode text. Send well-formed text.`,
  );
}
