/**
 * The one place that decides a request's protocol era, before anything else looks at it.
 *
 * The body decides: a request is modern when `params._meta` holds the protocolVersion key
 * (Python's legacy mode sends an empty `_meta` on every request, which is not a claim).
 * The MCP-Protocol-Version, Mcp-Method and Mcp-Name headers are a cross-check on modern
 * requests only; legacy requests never have their Mcp-* headers read, because 2025-era
 * clients and proxies do not promise to keep them truthful.
 */
import {
  isLegacyVersion,
  isModernVersion,
  isObject,
  JSON_RPC,
  LEGACY_PROTOCOL_VERSIONS,
  META,
  MODERN_PROTOCOL_VERSIONS,
} from './protocol.ts';

export interface Refusal {
  status: number;
  code: number;
  message: string;
  data?: unknown;
}

export type Classification =
  | { era: 'legacy' }
  | { era: 'modern'; version: string }
  /** `echoId: false` keeps the 2025-era answer to a bad version header byte-identical (id null). */
  | ({ era: 'reject'; echoId: boolean } & Refusal);

const LEGACY: Classification = { era: 'legacy' };
/** Methods whose target travels in Mcp-Name, and the params field it must equal. */
const NAMED_METHODS: Record<string, 'name' | 'uri'> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};
const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Optional whitespace around a header value is not part of it (RFC 9110 §5.5). */
function trimOws(value: string): string {
  const first = value.charCodeAt(0);
  const last = value.charCodeAt(value.length - 1);
  // Space is 32, tab is 9: most values have neither at either end and are returned as they are.
  if (first !== 32 && first !== 9 && last !== 32 && last !== 9) return value;
  return value.replace(/^[ \t]+|[ \t]+$/g, '');
}

/**
 * A routing header's single value. Engines join repeated header lines with ", ", and none
 * of these values may contain a comma (versions, method names and tool names never do; a
 * name that needs one travels base64-encoded), so a comma means the header came twice.
 */
function single(headers: Record<string, string>, name: string): string | undefined | 'duplicated' {
  const raw = headers[name];
  if (raw === undefined) return undefined;
  const value = trimOws(raw);
  return value.includes(',') ? 'duplicated' : value;
}

/** Mcp-Name as the client meant it: the base64 sentinel decoded strictly, or undefined if malformed. */
export function decodeMcpName(value: string): string | undefined {
  if (!value.startsWith(SENTINEL_PREFIX) || !value.endsWith(SENTINEL_SUFFIX)) return value;
  const encoded = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (encoded.length % 4 !== 0 || !BASE64.test(encoded)) return undefined;
  const bytes = Buffer.from(encoded, 'base64');
  // Non-canonical padding bits would decode to the same bytes from two different texts.
  if (bytes.toString('base64') !== encoded) return undefined;
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * What a modern request says it calls, from its headers alone, so a key can be refused
 * before its body is read. Undefined when the headers do not make a complete, well-formed
 * modern claim: such a request is decided after the body, by classifyRequest.
 */
export function routeFromHeaders(
  headers: Record<string, string>,
): { method: string; toolName?: string } | undefined {
  const version = single(headers, 'mcp-protocol-version');
  if (version === undefined || version === 'duplicated' || !isModernVersion(version)) return undefined;
  const method = single(headers, 'mcp-method');
  if (method === undefined || method === 'duplicated') return undefined;
  if (method !== 'tools/call') return { method };
  const name = single(headers, 'mcp-name');
  if (name === undefined || name === 'duplicated') return undefined;
  const toolName = decodeMcpName(name);
  return toolName === undefined ? undefined : { method, toolName };
}

function headerMismatch(message: string): Classification {
  return { era: 'reject', echoId: true, status: 400, code: JSON_RPC.HEADER_MISMATCH, message };
}

function invalidEnvelope(message: string): Classification {
  return { era: 'reject', echoId: true, status: 400, code: JSON_RPC.INVALID_PARAMS, message };
}

const ENVELOPE_HINT = `A 2026-07-28 request carries params._meta["${META.PROTOCOL_VERSION}"] (a string) and params._meta["${META.CLIENT_CAPABILITIES}"] (an object).`;

/** Decides the era of one JSON-RPC request (an object with a string method and a valid id). */
export function classifyRequest(
  message: { method: string; params?: unknown },
  headers: Record<string, string>,
): Classification {
  const { params } = message;
  const meta = isObject(params) && isObject(params._meta) ? params._meta : undefined;
  if (meta === undefined || !(META.PROTOCOL_VERSION in meta))
    return classifyUnclaimed(message.method, headers);

  const claimed = meta[META.PROTOCOL_VERSION];
  if (typeof claimed !== 'string')
    return invalidEnvelope(`The protocol version in params._meta must be a string. ${ENVELOPE_HINT}`);
  if (!isObject(meta[META.CLIENT_CAPABILITIES])) {
    return invalidEnvelope(`params._meta has no client capabilities object. ${ENVELOPE_HINT}`);
  }
  const refusal = routingHeadersRefusal(message.method, claimed, headers) ?? mcpNameRefusal(message, headers);
  return refusal ?? { era: 'modern', version: claimed };
}

/**
 * A body without a protocol-version claim is legacy, unless a modern or unknown
 * MCP-Protocol-Version header says the client meant something else.
 */
function classifyUnclaimed(method: string, headers: Record<string, string>): Classification {
  const headerVersion = headers['mcp-protocol-version'];
  if (headerVersion === undefined || isLegacyVersion(headerVersion)) return LEGACY;
  const version = trimOws(headerVersion);
  if (isModernVersion(version)) {
    return method === 'initialize'
      ? headerMismatch(
          `MCP-Protocol-Version ${version} does not go with initialize: the 2026-07-28 protocol has no handshake. Send server/discover, or drop the header to use ${LEGACY_PROTOCOL_VERSIONS.join(', ')}.`,
        )
      : invalidEnvelope(
          `MCP-Protocol-Version is ${version} but params._meta has no protocol version. ${ENVELOPE_HINT}`,
        );
  }
  return {
    era: 'reject',
    echoId: false,
    status: 400,
    code: JSON_RPC.INVALID_REQUEST,
    message: `Unsupported MCP-Protocol-Version: ${headerVersion.slice(0, 40)}. Supported: ${LEGACY_PROTOCOL_VERSIONS.join(', ')}`,
  };
}

/**
 * The MCP-Protocol-Version and Mcp-Method headers of a claimed request against its body, and the
 * claimed version against the ones this server speaks; undefined when all agree.
 */
function routingHeadersRefusal(
  bodyMethod: string,
  claimed: string,
  headers: Record<string, string>,
): Classification | undefined {
  const version = single(headers, 'mcp-protocol-version');
  const method = single(headers, 'mcp-method');
  if (version === 'duplicated') return headerMismatch('MCP-Protocol-Version must be sent exactly once.');
  if (method === 'duplicated') return headerMismatch('Mcp-Method must be sent exactly once.');
  if (version !== undefined && version !== claimed) {
    return headerMismatch(
      `MCP-Protocol-Version (${version.slice(0, 40)}) differs from the protocol version in params._meta (${claimed.slice(0, 40)}).`,
    );
  }
  if (method !== undefined && method !== bodyMethod) {
    return headerMismatch(
      `Mcp-Method (${method.slice(0, 100)}) differs from the body's method (${bodyMethod.slice(0, 100)}); they must match exactly, case included.`,
    );
  }
  if (!isModernVersion(claimed)) {
    return {
      era: 'reject',
      echoId: true,
      status: 400,
      code: JSON_RPC.UNSUPPORTED_PROTOCOL_VERSION,
      message: `Unsupported protocol version ${claimed.slice(0, 40)}: this server speaks ${MODERN_PROTOCOL_VERSIONS.join(', ')} (or ${LEGACY_PROTOCOL_VERSIONS.join(', ')} through initialize).`,
      data: { supported: [...MODERN_PROTOCOL_VERSIONS], requested: claimed },
    };
  }
  if (version === undefined)
    return headerMismatch(`A ${claimed} request must send the MCP-Protocol-Version header.`);
  if (method === undefined) return headerMismatch(`A ${claimed} request must send the Mcp-Method header.`);
  return undefined;
}

/** For a method that names its target (NAMED_METHODS), the Mcp-Name header against that target. */
function mcpNameRefusal(
  message: { method: string; params?: unknown },
  headers: Record<string, string>,
): Classification | undefined {
  const nameField = NAMED_METHODS[message.method];
  if (nameField === undefined) return undefined;
  const target = isObject(message.params) ? message.params[nameField] : undefined;
  if (typeof target !== 'string') {
    return invalidEnvelope(`${message.method} needs params.${nameField} (string).`);
  }
  const header = single(headers, 'mcp-name');
  if (header === undefined)
    return headerMismatch(`${message.method} must send the Mcp-Name header naming params.${nameField}.`);
  if (header === 'duplicated') return headerMismatch('Mcp-Name must be sent exactly once.');
  const decoded = decodeMcpName(header);
  if (decoded === undefined) {
    return headerMismatch(`Mcp-Name is not a valid =?base64?...?= value: check its base64 text and padding.`);
  }
  if (decoded !== target) {
    return headerMismatch(
      `Mcp-Name (${decoded.slice(0, 100)}) differs from params.${nameField} (${target.slice(0, 100)}).`,
    );
  }
  return undefined;
}
