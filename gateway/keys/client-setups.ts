/**
 * Ready-to-paste client setups for a new (or rotated) key: one per MCP client people use,
 * each naming the real URL of every namespace the key may use and the key itself.
 */

import { NAMESPACE_NAMES } from '../core/namespace-names.ts';
import type { KeyScopes } from '../core/scopes.ts';

const KEY_HEADER = 'X-API-Key';

/** Namespace name to its MCP endpoint URL. */
export type NamespaceUrls = Record<string, string>;

/**
 * Where clients reach the gateway: `--url`, else PUBLIC_BASE_URL, else HOST:PORT. A
 * wildcard listen address is no place to connect to, so it becomes loopback.
 */
export function gatewayBaseUrl(
  settings: { HOST: string; PORT: number; PUBLIC_BASE_URL?: string | undefined },
  override?: string,
): string {
  if (override) return override.replace(/\/+$/, '');
  if (settings.PUBLIC_BASE_URL) return settings.PUBLIC_BASE_URL.replace(/\/+$/, '');
  const host = ['0.0.0.0', '::', '[::]'].includes(settings.HOST) ? '127.0.0.1' : settings.HOST;
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${settings.PORT}`;
}

/** The endpoint of every namespace the scopes allow, in the order of NAMESPACE_NAMES (the registry's). */
export function namespaceUrls(baseUrl: string, scopes: KeyScopes): NamespaceUrls {
  const all = scopes.namespaces.includes('*');
  return Object.fromEntries(
    NAMESPACE_NAMES.filter((name) => all || scopes.namespaces.includes(name)).map((name) => [
      name,
      `${baseUrl}/${name}/mcp`,
    ]),
  );
}

/** The MCP clients whose setup `keys create` prints, in print order. */
export interface ClientSetups {
  /** One `claude mcp add` command line per namespace (Claude Code). */
  claudeCode: { name: string; argv: string[]; command: string }[];
  /** `.vscode/mcp.json`. */
  vscode: { servers: Record<string, { type: 'http'; url: string; headers: Record<string, string> }> };
  /** `.cursor/mcp.json` (or `~/.cursor/mcp.json`). */
  cursor: { mcpServers: Record<string, { url: string; headers: Record<string, string> }> };
  /**
   * `claude_desktop_config.json`: Claude Desktop's config file starts only local (stdio)
   * servers, so the mcp-remote bridge carries the HTTP connection. The key sits in `env`
   * and the header argument has no space, which Windows would otherwise split.
   */
  claudeDesktop: {
    mcpServers: Record<string, { command: 'npx'; args: string[]; env: { MCP_API_KEY: string } }>;
  };
  /** TypeScript MCP SDK (`@modelcontextprotocol/client`), one program per namespace. */
  typescript: { name: string; code: string }[];
  /** Python MCP SDK (`mcp`), one program per namespace. */
  python: { name: string; code: string }[];
}

/** Keys are base64url after `mcp_`, so nothing in a command line needs escaping beyond the quotes. */
function claudeCodeLine(name: string, url: string, key: string) {
  const header = `${KEY_HEADER}: ${key}`;
  const argv = ['claude', 'mcp', 'add', '--transport', 'http', name, url, '--header', header];
  return { name, argv, command: `claude mcp add --transport http ${name} ${url} --header "${header}"` };
}

function typescriptProgram(url: string, key: string): string {
  return `// npm install @modelcontextprotocol/client
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const transport = new StreamableHTTPClientTransport(new URL('${url}'), {
  requestInit: { headers: { '${KEY_HEADER}': '${key}' } },
});
const client = new Client({ name: 'my-agent', version: '1.0.0' });
await client.connect(transport);
const { tools } = await client.listTools();
console.log(tools.map((tool) => tool.name));
await client.close();`;
}

function pythonProgram(url: string, key: string): string {
  return `# pip install mcp
import asyncio

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main() -> None:
    async with httpx2.AsyncClient(headers={"${KEY_HEADER}": "${key}"}) as http:
        async with Client(streamable_http_client("${url}", http_client=http)) as client:
            listed = await client.list_tools()
            print([tool.name for tool in listed.tools])


asyncio.run(main())`;
}

export function clientSetups(urls: NamespaceUrls, key: string): ClientSetups {
  const entries = Object.entries(urls);
  const headers = { [KEY_HEADER]: key };
  const each = <T>(make: (name: string, url: string) => T) =>
    Object.fromEntries(entries.map(([name, url]) => [name, make(name, url)]));
  return {
    claudeCode: entries.map(([name, url]) => claudeCodeLine(name, url, key)),
    vscode: { servers: each((_, url) => ({ type: 'http' as const, url, headers })) },
    cursor: { mcpServers: each((_, url) => ({ url, headers })) },
    claudeDesktop: {
      mcpServers: each((_, url) => ({
        command: 'npx' as const,
        args: ['mcp-remote', url, '--header', `${KEY_HEADER}:\${MCP_API_KEY}`],
        env: { MCP_API_KEY: key },
      })),
    },
    typescript: entries.map(([name, url]) => ({ name, code: typescriptProgram(url, key) })),
    python: entries.map(([name, url]) => ({ name, code: pythonProgram(url, key) })),
  };
}

/** The plain-text form: a heading per client, JSON files pretty-printed, programs indented by none. */
export function renderSetups(setups: ClientSetups): string {
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  const sections = [
    `Claude Code (run once per namespace):\n${setups.claudeCode.map((line) => `  ${line.command}`).join('\n')}`,
    `VS Code (.vscode/mcp.json):\n${json(setups.vscode)}`,
    `Cursor (.cursor/mcp.json):\n${json(setups.cursor)}`,
    `Claude Desktop (claude_desktop_config.json, through the mcp-remote bridge):\n${json(setups.claudeDesktop)}`,
    ...setups.typescript.map(({ name, code }) => `TypeScript SDK, ${name}:\n${code}`),
    ...setups.python.map(({ name, code }) => `Python SDK, ${name}:\n${code}`),
  ];
  return sections.join('\n\n');
}
