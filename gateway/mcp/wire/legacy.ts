/**
 * The 2025 era (2025-03-26 … 2025-11-25): initialize handshake, no resultType, no cache
 * hints. Its bytes are what clients of that era have always received from this gateway.
 */
import type { HttpResponse } from '../../http/engine.ts';
import type { NamespaceModel, ToolResult } from '../model.ts';
import { isLegacyVersion, isObject, type JsonRpcId, LATEST_LEGACY_VERSION, META } from '../protocol.ts';
import { EncodedResult, resultResponse, type ToolFilter, textContent } from './json-rpc.ts';

export interface LegacyWire {
  initialize(id: JsonRpcId, params: unknown): HttpResponse;
  ping(id: JsonRpcId): HttpResponse;
  toolsList(id: JsonRpcId, filter: ToolFilter): HttpResponse;
  toolResult(id: JsonRpcId, result: ToolResult): HttpResponse;
}

/**
 * The same bytes as JSON.stringify({ content, isError: true, _meta }) or ({ content, structuredContent }),
 * written around `text`, which already is the structured output as JSON: the output is
 * serialized once, not twice. An error's code rides in `_meta` only: clients of this era
 * (the TypeScript SDK 1.x) check an error's structuredContent against the tool's output
 * schema too, and would turn the error into an exception.
 */
export function encodeLegacyToolResult(result: ToolResult): string {
  if (result.isError)
    return `{"content":${textContent(result.text)},"isError":true${errorMeta(result.code)}}`;
  // A handler that returned nothing has no JSON text to reuse.
  if (result.structured === undefined)
    return JSON.stringify({ content: [{ type: 'text', text: result.text }] });
  return `{"content":${textContent(result.text, result.quoted)},"structuredContent":${result.text}}`;
}

/** `,"_meta":{"mcp-gateway/errorCode":…}` for an error with a code, else nothing. */
function errorMeta(code: string | undefined): string {
  return code === undefined ? '' : `,"_meta":${JSON.stringify({ [META.ERROR_CODE]: code })}`;
}

export function createLegacyWire(model: NamespaceModel): LegacyWire {
  const list = (entries: string[]) => `{"tools":[${entries.join(',')}]}`;
  const toolsList = new EncodedResult(list(model.listed.map((tool) => tool.json)));
  const initializeFor = (version: string) =>
    JSON.stringify({
      protocolVersion: version,
      capabilities: { tools: { listChanged: false } },
      serverInfo: model.serverInfo,
      instructions: model.definition.instructions,
    });
  return {
    initialize(id, params) {
      const requested =
        isObject(params) && typeof params.protocolVersion === 'string' ? params.protocolVersion : '';
      // Never 2026-07-28 or later: that era has no handshake, so it is not negotiable here.
      return resultResponse(
        id,
        initializeFor(isLegacyVersion(requested) ? requested : LATEST_LEGACY_VERSION),
      );
    },
    ping: (id) => resultResponse(id, '{}'),
    toolsList(id, filter) {
      if (!filter) return resultResponse(id, toolsList);
      return resultResponse(
        id,
        list(model.listed.filter((tool) => filter(tool.name)).map((tool) => tool.json)),
      );
    },
    toolResult: (id, result) => resultResponse(id, encodeLegacyToolResult(result)),
  };
}
