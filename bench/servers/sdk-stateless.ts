/**
 * Baseline: the MCP SDK's stateless Streamable HTTP server as its documentation shows it,
 * a new McpServer and transport per request on node:http, with the same six tool schemas.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  consumeInput,
  createTopicInput,
  deleteTopicInput,
  publishInput,
} from '../../shared/event/schemas.ts';
import { announce } from './ready.ts';

function buildServer(): McpServer {
  const server = new McpServer({ name: 'sdk-baseline', version: '1.0.0' });
  const noop = async () => ({ content: [{ type: 'text' as const, text: '{}' }] });
  server.registerTool('event_capabilities', { description: 'capabilities' }, noop);
  server.registerTool('event_publish', { description: 'publish', inputSchema: publishInput.shape }, noop);
  server.registerTool('event_consume', { description: 'consume', inputSchema: consumeInput.shape }, noop);
  server.registerTool('event_topics', { description: 'topics' }, noop);
  server.registerTool(
    'event_create_topic',
    { description: 'create', inputSchema: createTopicInput.shape },
    noop,
  );
  server.registerTool(
    'event_delete_topic',
    { description: 'delete', inputSchema: deleteTopicInput.shape },
    noop,
  );
  return server;
}

const http = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', async () => {
    const server = buildServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString()));
  });
});
http.keepAliveTimeout = 65_000;
http.listen(0, '127.0.0.1', () => announce({ port: (http.address() as AddressInfo).port }));
