/**
 * Who may call what: a hook the gateway consults on every MCP request, after the key is
 * authenticated. On 2026-07-28 requests it is asked from the Mcp-Method/Mcp-Name headers
 * before the body is read (a lying header only refuses its sender, and an allowed call
 * still runs only once the headers are confirmed to match the body); on 2025-era requests
 * it is asked from the parsed body, since those headers are not validated in that era.
 */
import type { CallerIdentity } from './tool.ts';

export interface CallDescription {
  /** The namespace's name, as in /{namespace}/mcp. */
  namespace: string;
  /** The JSON-RPC method, e.g. tools/call, tools/list, server/discover, initialize. */
  method: string;
  /** For tools/call: the tool asked for. */
  toolName?: string;
}

export interface CallRefusal {
  /** 403 (not allowed) unless said otherwise, e.g. 429 for a spent quota. */
  status?: number;
  /** Tells the caller what to do, e.g. which scope the key lacks. */
  message: string;
}

export interface AccessHooks {
  /** null lets the call through; a refusal answers it with a JSON-RPC error. Default: allow all. */
  authorizeCall?(caller: CallerIdentity, call: CallDescription): CallRefusal | null;
  /**
   * Which tools tools/list shows this caller; undefined shows all of them and keeps the
   * precomputed answer. Default: all.
   */
  toolFilter?(caller: CallerIdentity, namespace: string): ((toolName: string) => boolean) | undefined;
}
