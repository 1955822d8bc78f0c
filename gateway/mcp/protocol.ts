/**
 * The two protocol eras every namespace endpoint serves. Versions are explicit sets, never
 * compared as dates: a version string is only what it says, and an unknown one is unknown.
 */

/** The handshake (initialize) era, newest first; the first is offered when a client asks for another. */
export const LEGACY_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
export const LATEST_LEGACY_VERSION = LEGACY_PROTOCOL_VERSIONS[0];
/** The stateless era: every request carries its own version and capabilities in params._meta. */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28'] as const;

export const META = {
  PROTOCOL_VERSION: 'io.modelcontextprotocol/protocolVersion',
  CLIENT_CAPABILITIES: 'io.modelcontextprotocol/clientCapabilities',
  SERVER_INFO: 'io.modelcontextprotocol/serverInfo',
  /** The gateway's own: a tool error's stable code (quota_exceeded, NOT_CONFIGURED, ...), for programs to branch on. */
  ERROR_CODE: 'mcp-gateway/errorCode',
} as const;

export const JSON_RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** The gateway's own: the caller's key may not make this call. */
  CALL_REFUSED: -32001,
  /** 2026-07-28: an MCP-* routing header is missing, malformed or disagrees with the body. */
  HEADER_MISMATCH: -32020,
  /** The gateway's own: the key's rate limit is reached (HTTP 429; data says how long to wait). */
  RATE_LIMITED: -32029,
  /** The gateway's own: the shared rate-limit store is down and RATE_LIMIT_ON_STORE_ERROR=deny (HTTP 503). */
  RATE_LIMIT_STORE_UNAVAILABLE: -32030,
  /** 2026-07-28: the claimed protocol version is not served; data lists what is. */
  UNSUPPORTED_PROTOCOL_VERSION: -32022,
} as const;

export type JsonRpcId = string | number;

export function isLegacyVersion(version: string): boolean {
  return (LEGACY_PROTOCOL_VERSIONS as readonly string[]).includes(version);
}

export function isModernVersion(version: string): boolean {
  return (MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(version);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** MCP ids are strings or integers; an integer past 2^53 could not be echoed back unchanged. */
export function isValidId(id: unknown): id is JsonRpcId {
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));
}
