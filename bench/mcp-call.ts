/** A minimal tools/call over HTTP for the benchmark: one request, the structured result back. */
import { postToolCall } from '../test/support/tool-call.ts';

export { toolsCallBody } from '../test/support/tool-call.ts';

export async function callTool<T>(
  url: string,
  key: string,
  name: string,
  args: Record<string, unknown>,
): Promise<T> {
  const response = await postToolCall(url, key, name, args);
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
