/**
 * The 2026-07-28 era: no handshake; server/discover describes the server; every result
 * carries resultType, names the server in result _meta, and list-like results carry cache
 * hints. Everything a request does not change is encoded once, here, at start.
 */
import type { HttpResponse } from '../../http/engine.ts';
import type { NamespaceModel, ToolResult } from '../model.ts';
import { type JsonRpcId, META, MODERN_PROTOCOL_VERSIONS } from '../protocol.ts';
import { EncodedResult, resultResponse, type ToolFilter, textContent } from './json-rpc.ts';

/**
 * Freshness hints. Every answer is behind an API key and may differ per key (tool filters),
 * so no cache may share one across keys: always private. A minute keeps a client from
 * re-discovering on every call while a redeploy's new tools show up soon.
 */
export const CACHE_HINTS = { ttlMs: 60_000, cacheScope: 'private' } as const;

export interface ModernWire {
  discover(id: JsonRpcId): HttpResponse;
  toolsList(id: JsonRpcId, filter: ToolFilter): HttpResponse;
  toolResult(id: JsonRpcId, result: ToolResult): HttpResponse;
}

/**
 * A successful tool result in this era; `meta` is the result `_meta` as JSON. `text` already
 * is the structured output as JSON (see ToolResult): not serialized twice.
 */
export function encodeModernToolResult(
  result: Extract<ToolResult, { isError: false }>,
  meta: string,
): string {
  const withOutput = result.structured !== undefined;
  const content = withOutput
    ? textContent(result.text, result.quoted)
    : JSON.stringify([{ type: 'text', text: result.text }]);
  const structured = withOutput ? `,"structuredContent":${result.text}` : '';
  return `{"resultType":"complete","content":${content}${structured},"isError":false,"_meta":${meta}}`;
}

export function createModernWire(model: NamespaceModel): ModernWire {
  const meta = JSON.stringify({ [META.SERVER_INFO]: model.serverInfo });
  /**
   * A tool error: the text for people, and its stable code for programs, in structuredContent
   * (clients of this era check it against the output schema only when isError is false) and in _meta.
   */
  const errorResult = (text: string, code = 'tool_error') =>
    JSON.stringify({
      resultType: 'complete',
      content: [{ type: 'text', text }],
      structuredContent: { code },
      isError: true,
      _meta: { [META.SERVER_INFO]: model.serverInfo, [META.ERROR_CODE]: code },
    });
  const hints = `"ttlMs":${CACHE_HINTS.ttlMs},"cacheScope":"${CACHE_HINTS.cacheScope}"`;
  const list = (entries: string[]) =>
    `{"resultType":"complete","tools":[${entries.join(',')}],${hints},"_meta":${meta}}`;
  const toolsList = new EncodedResult(list(model.listed.map((tool) => tool.json)));
  const discover = new EncodedResult(
    JSON.stringify({
      resultType: 'complete',
      supportedVersions: MODERN_PROTOCOL_VERSIONS,
      capabilities: { tools: { listChanged: false } },
      instructions: model.definition.instructions,
      ...CACHE_HINTS,
      _meta: { [META.SERVER_INFO]: model.serverInfo },
    }),
  );
  return {
    discover: (id) => resultResponse(id, discover),
    toolsList(id, filter) {
      if (!filter) return resultResponse(id, toolsList);
      return resultResponse(
        id,
        list(model.listed.filter((tool) => filter(tool.name)).map((tool) => tool.json)),
      );
    },
    toolResult(id, result) {
      if (result.isError) return resultResponse(id, errorResult(result.text, result.code));
      return resultResponse(id, encodeModernToolResult(result, meta));
    },
  };
}
