/**
 * One MCP tools/call (or tools/list) as a bare HTTP POST, the key in X-API-Key: no SDK and no session, as a
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
  options: PostOptions = {},
): Promise<Response> {
  return postMessage(url, key, toolsCallBody(name, args, options.id), options);
}

/** POSTs tools/list (id 1, no params) to a namespace's MCP endpoint, as postToolCall does a call. */
export function postToolsList(url: string, key: string | null, options: PostOptions = {}): Promise<Response> {
  return postMessage(
    url,
    key,
    JSON.stringify({ jsonrpc: '2.0', id: options.id ?? 1, method: 'tools/list' }),
    options,
  );
}

interface PostOptions {
  headers?: Record<string, string>;
  id?: string | number;
  signal?: AbortSignal;
}

function postMessage(url: string, key: string | null, body: string, options: PostOptions): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(key === null ? {} : { 'x-api-key': key }),
      ...options.headers,
    },
    body,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
