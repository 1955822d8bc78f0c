/** A minimal tools/call over HTTP for the benchmark: one request, the structured result back. */
export async function callTool<T>(
  url: string,
  key: string,
  name: string,
  args: Record<string, unknown>,
): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-api-key': key,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = (await response.json()) as {
    result?: { isError?: boolean; structuredContent?: T; content?: Array<{ text: string }> };
    error?: { message: string };
  };
  if (!body.result || body.result.isError) {
    throw new Error(
      `${name} failed: ${body.error?.message ?? body.result?.content?.[0]?.text ?? response.status}`,
    );
  }
  return body.result.structuredContent as T;
}

export function toolsCallBody(name: string, args: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
}
