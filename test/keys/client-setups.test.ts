/**
 * The client setups `npm run keys -- create` prints, taken at their word: each one is
 * parsed the way its client would read it (JSON files as JSON, the Claude Code line as
 * shell words, the SDK programs for their URL and header), and every URL it names is
 * called with the header it names against a running gateway. The SDK programs are also
 * run as they are printed.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { runCli, shellWords } from '../support/cli.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { runPython } from '../support/python.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const NAMESPACES = ['event', 'gsc', 'memory', 'producthunt', 'skills'];

interface Endpoint {
  client: string;
  name: string;
  url: string;
  header: [string, string];
}

let gw: TestGateway;
before(async () => {
  gw = await startTestGateway();
});
after(() => gw?.close());

function toolsList({ url, header }: Endpoint): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      [header[0]]: header[1],
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
}

/** `Name: value` (Claude Code, the SDKs) or `Name:value` (mcp-remote) as a pair. */
function headerPair(raw: string): [string, string] {
  const colon = raw.indexOf(':');
  return [raw.slice(0, colon), raw.slice(colon + 1).trim()];
}

function claudeCodeEndpoint(line: string): Endpoint {
  const words = shellWords(line);
  assert.deepEqual(words.slice(0, 5), ['claude', 'mcp', 'add', '--transport', 'http'], line);
  assert.equal(words[7], '--header');
  assert.equal(words.length, 9);
  return { client: 'claude-code', name: words[5]!, url: words[6]!, header: headerPair(words[8]!) };
}

type JsonServers = Record<
  string,
  { url?: string; headers?: Record<string, string>; args?: string[]; env?: Record<string, string> }
>;

function jsonEndpoints(client: string, servers: JsonServers): Endpoint[] {
  return Object.entries(servers).map(([name, server]) => {
    if (server.args) {
      // The mcp-remote bridge: npx mcp-remote URL --header Name:${VAR}, VAR from env.
      assert.deepEqual([server.args[0], server.args[2]], ['mcp-remote', '--header']);
      const header = server.args[3]!.replace(
        /\$\{(\w+)\}/g,
        (_, variable: string) => server.env?.[variable] ?? '',
      );
      return { client, name, url: server.args[1]!, header: headerPair(header) };
    }
    const [pair, ...more] = Object.entries(server.headers ?? {});
    assert.equal(more.length, 0);
    return { client, name, url: server.url!, header: pair! };
  });
}

function typescriptEndpoint(name: string, code: string): Endpoint {
  const url = /new URL\('([^']+)'\)/.exec(code)?.[1];
  const header = /headers: \{ '([^']+)': '([^']+)' \}/.exec(code);
  assert.ok(url && header, code);
  return { client: 'typescript', name, url, header: [header[1]!, header[2]!] };
}

function pythonEndpoint(name: string, code: string): Endpoint {
  const url = /streamable_http_client\("([^"]+)"/.exec(code)?.[1];
  const header = /headers=\{"([^"]+)": "([^"]+)"\}/.exec(code);
  assert.ok(url && header, code);
  return { client: 'python', name, url, header: [header[1]!, header[2]!] };
}

/** Every endpoint answers tools/list, at the namespace's own URL, with the new key. */
async function assertEndpointsWork(endpoints: Endpoint[], key: string, namespaces: string[]): Promise<void> {
  const clients = ['claude-code', 'vscode', 'cursor', 'claude-desktop', 'typescript', 'python'];
  for (const client of clients) {
    const own = endpoints.filter((endpoint) => endpoint.client === client);
    assert.deepEqual(
      own.map((endpoint) => endpoint.name).sort(),
      namespaces,
      `${client} names every namespace`,
    );
  }
  for (const endpoint of endpoints) {
    assert.equal(endpoint.url, `${gw.url}/${endpoint.name}/mcp`, `${endpoint.client} ${endpoint.name}`);
    assert.deepEqual(endpoint.header, ['X-API-Key', key], `${endpoint.client} ${endpoint.name}`);
    const response = await toolsList(endpoint);
    assert.equal(response.status, 200, `${endpoint.client} ${endpoint.name}: ${await response.text()}`);
  }
}

test('create --json: each structured setup, parsed as its client would, reaches every namespace', async () => {
  const created = await runCli('keys', ['create', '--label', 'setups', '--url', `${gw.url}/`, '--json'], {
    env: { DATA_DIR: gw.dataDir },
  });
  assert.equal(created.code, 0, created.stderr);
  const { key, setups, urls } = JSON.parse(created.stdout);
  assert.deepEqual(Object.keys(urls).sort(), NAMESPACES);
  const endpoints: Endpoint[] = [
    ...setups.claudeCode.map((line: { command: string; argv: string[] }) => {
      assert.deepEqual(shellWords(line.command), line.argv, 'the printed line is the argv');
      return claudeCodeEndpoint(line.command);
    }),
    ...jsonEndpoints('vscode', setups.vscode.servers),
    ...jsonEndpoints('cursor', setups.cursor.mcpServers),
    ...jsonEndpoints('claude-desktop', setups.claudeDesktop.mcpServers),
    ...setups.typescript.map((s: { name: string; code: string }) => typescriptEndpoint(s.name, s.code)),
    ...setups.python.map((s: { name: string; code: string }) => pythonEndpoint(s.name, s.code)),
  ];
  for (const server of Object.values(setups.vscode.servers as Record<string, { type: string }>)) {
    assert.equal(server.type, 'http');
  }
  for (const server of Object.values(
    setups.claudeDesktop.mcpServers as Record<string, { command: string }>,
  )) {
    assert.equal(server.command, 'npx');
  }
  await assertEndpointsWork(endpoints, key, NAMESPACES);
});

/** Splits the text output at its client headings; the body of each runs to the next one. */
function sections(text: string): Map<string, string> {
  const heading = /^(Claude Code|VS Code|Cursor|Claude Desktop|TypeScript SDK, \w+|Python SDK, \w+)\b.*:$/;
  const found = new Map<string, string>();
  let current: string | undefined;
  for (const line of text.split('\n')) {
    const match = heading.exec(line);
    if (match) {
      current = match[1]!;
      found.set(current, '');
    } else if (current) found.set(current, `${found.get(current)}${line}\n`);
  }
  return new Map([...found].map(([name, body]) => [name, body.trim()]));
}

test('create (text): URL from HOST and PORT; every printed setup parses and works; the SDK programs run', async () => {
  const created = await runCli('keys', ['create', '--label', 'text', '--namespaces', 'event,memory'], {
    env: { DATA_DIR: gw.dataDir, HOST: '127.0.0.1', PORT: String(gw.port) },
  });
  assert.equal(created.code, 0, created.stderr);
  const key = /^ {2}(mcp_\S+)$/m.exec(created.stdout)?.[1] as string;
  assert.ok(key, created.stdout);
  const parts = sections(created.stdout);
  const endpoints: Endpoint[] = [
    ...parts
      .get('Claude Code')!
      .split('\n')
      .map((line) => claudeCodeEndpoint(line.trim())),
    ...jsonEndpoints('vscode', JSON.parse(parts.get('VS Code')!).servers),
    ...jsonEndpoints('cursor', JSON.parse(parts.get('Cursor')!).mcpServers),
    ...jsonEndpoints('claude-desktop', JSON.parse(parts.get('Claude Desktop')!).mcpServers),
    ...['event', 'memory'].map((name) => typescriptEndpoint(name, parts.get(`TypeScript SDK, ${name}`)!)),
    ...['event', 'memory'].map((name) => pythonEndpoint(name, parts.get(`Python SDK, ${name}`)!)),
  ];
  await assertEndpointsWork(endpoints, key, ['event', 'memory']);

  // The programs themselves, as printed: each lists the namespace's tools.
  const typescript = await run(
    process.execPath,
    ['--input-type=module', '-e', parts.get('TypeScript SDK, event')!],
    { cwd: root, timeout: 60_000 },
  );
  assert.match(typescript.stdout, /event_capabilities/);
  const python = await runPython(parts.get('Python SDK, memory')!);
  assert.match(python, /memory_search/);
});
