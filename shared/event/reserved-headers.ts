/**
 * Header names the gateway reserves for its publisher stamp (gateway/namespaces/event/
 * provenance.ts). Shared because the worker's size rule must not charge the stamp to
 * the caller: a message at the limit still has to fit once stamped.
 */
export const RESERVED_HEADER_PREFIX = 'mcp-';

/** Room for the stamp on top of PUBLISH_MAX_MESSAGE_BYTES; the stamp itself is about 250 bytes. */
export const RESERVED_HEADERS_MAX_BYTES = 1024;

/** Any case: many consumers compare header names case-insensitively. */
export function isReservedHeader(name: string): boolean {
  return name.slice(0, RESERVED_HEADER_PREFIX.length).toLowerCase() === RESERVED_HEADER_PREFIX;
}
