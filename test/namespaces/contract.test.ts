/**
 * The namespace contract's shared suite, run over every mounted namespace (the five of the
 * registry and the toy example of docs/namespaces.md) through real gateways on real HTTP,
 * with the TypeScript SDK's v1 client (2025 era) and v2 client pinned to 2026-07-28:
 * capabilities in one shape, error codes on the wire, and bad settings that mount the
 * namespace, refuse its tools naming the setting, and are logged once at start.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadGatewayConfig } from '../../gateway/config.ts';
import { createLogger } from '../../gateway/logger.ts';
import { COMMON_ERROR_CODES } from '../../gateway/mcp/namespace-contract.ts';
import { capabilitiesOutput, mountNamespace } from '../../gateway/mcp/namespace-mount.ts';
import { META } from '../../gateway/mcp/protocol.ts';
import { ToolError } from '../../gateway/mcp/tool.ts';
import { eventNamespace } from '../../gateway/namespaces/event/index.ts';
import { type AnyNamespace, NAMESPACES } from '../../gateway/namespaces/registry.ts';
import { type RunningGateway, startGateway } from '../../gateway/server.ts';
import { absentBroker } from '../support/gateway.ts';
import { mintKey } from '../support/harness.ts';
import { exampleNamespace } from './example/index.ts';

const MOUNTED: readonly AnyNamespace[] = [...NAMESPACES, exampleNamespace as AnyNamespace];

/**
 * Per namespace: one bad setting (a value that must never be echoed), a call that needs no
 * network, with valid arguments, to show the refusal, and a call that fails with one of the
 * namespace's own codes. A namespace added to the registry without a line here fails the
 * first test.
 */
interface Case {
  bad: Record<string, string>;
  call: [string, Record<string, unknown>];
  fails: [string, Record<string, unknown>, string];
}
const NO_SUCH_MEMORY = '00000000-0000-4000-8000-000000000000';
const CASES: Record<string, Case> = {
  event: {
    bad: { EVENT_SIGNING_SECRET: 'short-secret-value' },
    call: ['event_topics', {}],
    fails: ['event_topics', {}, 'WORKER_UNREACHABLE'],
  },
  gsc: {
    bad: { GSC_TIMEOUT_MS: 'soon-ish-value' },
    call: ['gsc_list_properties', {}],
    fails: ['gsc_list_properties', {}, 'NOT_CONFIGURED'],
  },
  memory: {
    bad: { MEMORY_MAX_PER_KEY: 'lots-of-them-value' },
    call: ['memory_stats', {}],
    fails: ['memory_get', { id: NO_SUCH_MEMORY }, 'NOT_FOUND'],
  },
  producthunt: {
    bad: { PRODUCTHUNT_API_URL: 'ftp://bad-url-value' },
    call: ['producthunt_viewer', {}],
    fails: ['producthunt_viewer', {}, 'NOT_CONFIGURED'],
  },
  skills: {
    bad: { GITHUB_API_URL: 'not-a-url-value' },
    call: ['skills_search', { query: 'pdf' }],
    fails: [
      'skills_get',
      { source: 'https://evilgithubusercontent.com/a/b/main/SKILL.md' },
      'INVALID_ARGUMENT',
    ],
  },
  example: {
    bad: { EXAMPLE_MAX_NAME: 'many-letters-value' },
    call: ['example_greet', { name: 'Ada' }],
    fails: ['example_greet', { name: 'A'.repeat(41) }, 'NAME_TOO_LONG'],
  },
};

type Era = 'legacy' | 'modern';
interface CallResult {
  isError?: boolean;
  content?: unknown;
  structuredContent?: unknown;
  _meta?: Record<string, unknown>;
}
interface EraClient {
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<CallResult>;
  close(): Promise<void>;
}

interface Running {
  url: string;
  key: string;
  lines: Array<Record<string, unknown>>;
  gateway: RunningGateway;
  dataDir: string;
}

async function start(extraEnv: Record<string, string>): Promise<Running> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-contract-'));
  const { key } = mintKey(dataDir);
  // No model download and no embedding threads: the suite is about the contract, not search.
  const env = { HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, MEMORY_EMBEDDINGS: 'none', ...extraEnv };
  const config = loadGatewayConfig({ ...env, LOG_LEVEL: 'info' });
  const lines: Array<Record<string, unknown>> = [];
  const destination = { write: (line: string) => void lines.push(JSON.parse(line)) };
  const gateway = await startGateway({
    config,
    env,
    log: createLogger('info', destination),
    broker: absentBroker,
    namespaces: MOUNTED,
  });
  return { url: `http://127.0.0.1:${gateway.port}`, key, lines, gateway, dataDir };
}

async function stop(running: Running | undefined): Promise<void> {
  if (!running) return;
  await running.gateway.close();
  await rm(running.dataDir, { recursive: true, force: true });
}

async function connect(running: Running, namespace: string, era: Era, key = running.key): Promise<EraClient> {
  const url = new URL(`${running.url}/${namespace}/mcp`);
  const requestInit = { headers: { 'X-API-Key': key } };
  if (era === 'legacy') {
    const client = new LegacyClient({ name: 'contract-suite', version: '1.0.0' });
    await client.connect(new LegacyTransport(url, { requestInit }));
    return client as unknown as EraClient;
  }
  const client = new ModernClient(
    { name: 'contract-suite', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit }));
  assert.equal(client.getProtocolEra(), 'modern');
  return client as unknown as EraClient;
}

/** Runs `check` with a client of each era on each mounted namespace. */
async function everywhere(
  running: Running,
  check: (name: string, era: Era, client: EraClient) => Promise<void>,
): Promise<void> {
  for (const { name } of MOUNTED) {
    for (const era of ['legacy', 'modern'] as const) {
      const client = await connect(running, name, era);
      try {
        await check(name, era, client);
      } finally {
        await client.close();
      }
    }
  }
}

const textOf = (result: CallResult) =>
  (result.content as Array<{ text?: string }>).map((block) => block.text ?? '').join('\n');

/** The stable code of a tool error as the era carries it: _meta in both, structuredContent too in 2026-07-28. */
function codeOf(result: CallResult, era: Era): string {
  assert.equal(result.isError, true, `expected a tool error, got ${JSON.stringify(result).slice(0, 300)}`);
  const code = result._meta?.[META.ERROR_CODE];
  assert.equal(typeof code, 'string', `no ${META.ERROR_CODE} in _meta: ${JSON.stringify(result)}`);
  if (era === 'modern') assert.deepEqual(result.structuredContent, { code });
  else assert.equal(result.structuredContent, undefined, 'the 2025 era keeps structuredContent for outputs');
  return code as string;
}

test('every mounted namespace has a case here, and its settings parse from an empty environment', () => {
  assert.deepEqual(MOUNTED.map((namespace) => namespace.name).sort(), Object.keys(CASES).sort());
  for (const namespace of MOUNTED) {
    const parsed = namespace.settings.safeParse({});
    assert.ok(parsed.success, `${namespace.name}: an empty environment must parse (${parsed.error})`);
  }
});

describe('with good settings', () => {
  let running: Running | undefined;
  before(async () => {
    running = await start({});
  });
  after(() => stop(running));

  test('capabilities: one shape, first in tools/list, naming every tool and every error code', async () => {
    await everywhere(running!, async (name, era, client) => {
      const { tools } = await client.listTools();
      assert.equal(tools[0]?.name, `${name}_capabilities`, `${name} ${era}`);
      const result = await client.callTool({ name: `${name}_capabilities`, arguments: {} });
      assert.notEqual(result.isError, true, textOf(result));
      const caps = capabilitiesOutput.strict().parse(result.structuredContent);
      assert.equal(caps.namespace, name);
      assert.deepEqual(
        caps.tools.map((tool) => tool.name),
        tools.map((tool) => tool.name),
      );
      const codes = caps.error_codes.map((entry) => entry.code);
      const contract = MOUNTED.find((namespace) => namespace.name === name)!;
      for (const code of [...Object.keys(COMMON_ERROR_CODES), ...Object.keys(contract.errorCodes)])
        assert.ok(codes.includes(code), `${name} capabilities lists ${code}`);
      assert.ok(caps.error_codes.every((entry) => entry.meaning.length > 10));
    });
  });

  test('a tool error carries its stable code beside the text, in both eras, and capabilities list it', async () => {
    await everywhere(running!, async (name, era, client) => {
      const wrong = await client.callTool({
        name: `${name}_capabilities`,
        arguments: { no_such_argument: 1 },
      });
      assert.equal(codeOf(wrong, era), 'invalid_arguments', `${name} ${era}: ${textOf(wrong)}`);
      assert.match(textOf(wrong), /Invalid arguments/);
      const [tool, args, code] = CASES[name]!.fails;
      const failed = await client.callTool({ name: tool, arguments: args });
      assert.equal(codeOf(failed, era), code, `${name} ${era}: ${textOf(failed)}`);
      const caps = capabilitiesOutput.parse(
        (await client.callTool({ name: `${name}_capabilities`, arguments: {} })).structuredContent,
      );
      assert.ok(
        caps.error_codes.some((entry) => entry.code === code),
        `${name} lists ${code} among its error codes`,
      );
    });
  });

  test('the example namespace answers over HTTP, and its own code reaches the wire', async () => {
    for (const era of ['legacy', 'modern'] as const) {
      const client = await connect(running!, 'example', era);
      try {
        const hello = await client.callTool({ name: 'example_greet', arguments: { name: 'Ada' } });
        assert.deepEqual(hello.structuredContent, { greeting: 'Hello, Ada!' });
        const long = await client.callTool({ name: 'example_greet', arguments: { name: 'A'.repeat(41) } });
        assert.equal(codeOf(long, era), 'NAME_TOO_LONG');
        assert.match(textOf(long), /at most 40/);
      } finally {
        await client.close();
      }
    }
  });
  test('a key limit refusal (quota_exceeded) carries its code on the wire in both eras', async () => {
    for (const era of ['legacy', 'modern'] as const) {
      const limited = mintKey(running!.dataDir, `quota-${era}`, null, { limits: { quotas: { example: 1 } } });
      const client = await connect(running!, 'example', era, limited.key);
      try {
        const first = await client.callTool({ name: 'example_greet', arguments: { name: 'Ada' } });
        assert.notEqual(first.isError, true, textOf(first));
        const second = await client.callTool({ name: 'example_greet', arguments: { name: 'Ada' } });
        assert.equal(codeOf(second, era), 'quota_exceeded');
        assert.match(textOf(second), /^\[quota_exceeded\] /);
      } finally {
        await client.close();
      }
    }
  });
});

describe('with a bad setting in every namespace', () => {
  let running: Running | undefined;
  before(async () => {
    running = await start(Object.assign({}, ...Object.values(CASES).map((entry) => entry.bad)));
  });
  after(() => stop(running));

  test('the gateway starts, every namespace mounts, and each says once at start which setting is bad', () => {
    const said = running!.lines.filter((line) => Array.isArray(line.settings));
    assert.deepEqual(said.map((line) => line.namespace).sort(), Object.keys(CASES).sort());
    for (const line of said) {
      const [setting, value] = Object.entries(CASES[line.namespace as string]!.bad)[0]!;
      assert.equal(line.level, 50, 'logged as an error');
      assert.match(String(line.msg), new RegExp(`${setting}:.*SETTINGS_INVALID`));
      assert.doesNotMatch(JSON.stringify(line), new RegExp(value), 'the value is never logged');
    }
  });

  test('capabilities report the setting; every other tool refuses with SETTINGS_INVALID naming it', async () => {
    await everywhere(running!, async (name, era, client) => {
      const [setting, value] = Object.entries(CASES[name]!.bad)[0]!;
      const { tools } = await client.listTools();
      assert.ok(tools.length > 1, `${name}: its tools are still listed`);
      const caps = capabilitiesOutput.parse(
        (await client.callTool({ name: `${name}_capabilities`, arguments: {} })).structuredContent,
      );
      assert.equal(caps.ready, false);
      assert.match(caps.problems[0] ?? '', new RegExp(`^${setting}: `));
      const [tool, args] = CASES[name]!.call;
      const refused = await client.callTool({ name: tool, arguments: args });
      assert.equal(codeOf(refused, era), 'SETTINGS_INVALID', `${name} ${era}`);
      assert.match(textOf(refused), new RegExp(`${setting}: .*restart`));
      assert.doesNotMatch(textOf(refused) + JSON.stringify(caps), new RegExp(value));
    });
  });

  test('readiness is not taken away by a bad setting: the namespaces still answer', async () => {
    const report = await running!.gateway.readiness();
    assert.equal(report.checks.namespace_memory?.ok, true, JSON.stringify(report));
  });
});

test('each bad event signing setting mounts the namespace, named and never echoed (these stopped the gateway)', async () => {
  const secret1 = 'first-signing-secret-0123456789-abcdef';
  const secret2 = 'second-signing-secret-0123456789-abcdef';
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ EVENT_SIGNING_SECRET: 'short-secret-value' }, /EVENT_SIGNING_SECRET: must be at least 32/],
    [
      { EVENT_SIGNING_PRIVATE_KEY: 'not-a-pem-key-value' },
      /EVENT_SIGNING_PRIVATE_KEY: must be an Ed25519 private key/,
    ],
    [
      { EVENT_SIGNING_SECRET: secret1, EVENT_VERIFY_SECRETS: `${secret2},short-secret-value` },
      /EVENT_VERIFY_SECRETS: each comma-separated secret/,
    ],
    [{ EVENT_VERIFY_PUBLIC_KEYS: 'not-a-pem-key-value' }, /EVENT_VERIFY_PUBLIC_KEYS: holds no PEM/],
    [
      { EVENT_SIGNING_SECRET: secret1, EVENT_SIGNING_PRIVATE_KEY: 'not-a-pem-key-value' },
      /EVENT_SIGNING_PRIVATE_KEY/,
    ],
  ];
  for (const [env, named] of cases) {
    const mounted = mountNamespace(eventNamespace, env, { broker: absentBroker });
    const problems = mounted.settingsProblems.join('; ');
    assert.match(problems, named);
    assert.doesNotMatch(problems, /short-secret-value|not-a-pem-key-value|first-signing|second-signing/);
    const publish = (await mounted.tools()).find((tool) => tool.name === 'event_publish')!;
    const context = { caller: { apiKeyId: 'k' }, signal: new AbortController().signal, requestId: 'r' };
    await assert.rejects(publish.handler({ value: 'x' }, context), (error: unknown) => {
      assert.ok(error instanceof ToolError);
      assert.equal(error.code, 'SETTINGS_INVALID');
      assert.match(error.message, named);
      return true;
    });
    await mounted.close();
  }
});
