/** An MCP SDK client on one namespace of a test gateway, recording every result it sees. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestGateway } from './gateway.ts';

export interface ToolResult {
  isError: boolean;
  text: string;
  data: Record<string, unknown>;
}

export interface NamespaceClient {
  client: Client;
  call(name: string, args?: Record<string, unknown>): Promise<ToolResult>;
  /** Every result text seen so far, for secret scans. */
  seen: string[];
  close(): Promise<void>;
}

export async function connectNamespace(gw: TestGateway, namespace: string): Promise<NamespaceClient> {
  const client = new Client({ name: 'namespace-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}/${namespace}/mcp`), {
      requestInit: { headers: { 'X-API-Key': gw.apiKey } },
    }),
  );
  const seen: string[] = [];
  return {
    client,
    seen,
    async call(name, args = {}) {
      const result = await client.callTool({ name, arguments: args });
      const content = result.content as Array<{ type: string; text?: string }>;
      const text = content.map((c) => c.text ?? '').join('\n');
      seen.push(text, JSON.stringify(result.structuredContent ?? null));
      return {
        isError: result.isError === true,
        text,
        data: (result.structuredContent ?? {}) as Record<string, unknown>,
      };
    },
    close: () => client.close(),
  };
}
