/**
 * One MCP tools/call as a bare HTTP POST, the key in X-API-Key: no SDK and no session, as a
 * script or a load balancer's health check sends it. For tests that need what the SDK hides
 * (the HTTP status, Retry-After, a fresh connection per call, a missing key) or that call a
 * gateway in another process; each reads the answer its own way.
 */

export function toolsCallBody(name: string, args: Record<string, unknown>, id: string | number = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
}

/**
 * POSTs `name(args)` to a namespace's MCP endpoint (`${gateway.url}/memory/mcp`). A `null` key
 * sends no X-API-Key; `options.headers` are added to (or replace) the JSON-RPC ones.
 */
export function postToolCall(
  url: string,
  key: string | null,
  name: string,
  args: Record<string, unknown> = {},
  options: { headers?: Record<string, string>; id?: string | number; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(key === null ? {} : { 'x-api-key': key }),
      ...options.headers,
    },
    body: toolsCallBody(name, args, options.id),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
