/**
 * Runs in its own process (so the race between the client's writes and the gateway's
 * answer is real): sends oversized requests with Node's fetch or the MCP SDK client and
 * prints, as one JSON line, how many times each outcome was seen.
 *
 * node --import tsx early-answer-client.ts <fetch|sdk> <413|401> <url> <dataDir> <key> <times> <bytes>
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mintKey, openKeyStore } from '../../support/harness.ts';

const [client, expected, url, dataDir, validKey, timesText, bytesText] = process.argv.slice(2) as [
  'fetch' | 'sdk',
  '413' | '401',
  string,
  string,
  string,
  string,
  string,
];
const times = Number(timesText);
const bytes = Number(bytesText);
const outcomes: Record<string, number> = {};
const count = (outcome: string) => {
  outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
};
const describe = (error: unknown) => {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return `error: ${cause?.code ?? cause?.message ?? (error as Error).message}`.slice(0, 300);
};

async function withFetch(): Promise<void> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'event_publish', arguments: { value: 'x'.repeat(bytes) } },
  });
  const key = expected === '401' ? 'mcp_notregisterednotregisterednotregi' : validKey;
  for (let i = 0; i < times; i += 1) {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-api-key': key,
        },
        body,
      });
      const answer = (await res.json()) as { error?: string };
      count(`${res.status} ${answer.error}`);
    } catch (error) {
      count(describe(error));
    }
  }
}

/** A key that is valid for initialize and then revoked, so the large call meets a 401. */
function freshKey(): { key: string; revoke(): void } {
  const created = mintKey(dataDir, 'early-answer');
  return {
    key: created.key,
    revoke() {
      const store = openKeyStore(dataDir);
      try {
        store.revoke(created.id);
      } finally {
        store.close();
      }
    },
  };
}

async function withSdk(): Promise<void> {
  for (let i = 0; i < times; i += 1) {
    const credentials = expected === '401' ? freshKey() : { key: validKey, revoke() {} };
    const sdk = new Client({ name: 'early-answer', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { 'X-API-Key': credentials.key } },
    });
    try {
      await sdk.connect(transport);
      credentials.revoke();
      await sdk.callTool({ name: 'event_publish', arguments: { value: 'x'.repeat(bytes) } });
      count('answered without an error');
    } catch (error) {
      const message = (error as Error).message;
      // StreamableHTTPError carries the HTTP status as its code.
      const status = (error as { code?: unknown }).code;
      const code = /"error":"([a-z_]+)"/.exec(message)?.[1];
      count(typeof status === 'number' ? `${status} ${code}` : describe(error));
    } finally {
      await sdk.close().catch(() => undefined);
    }
  }
}

await (client === 'fetch' ? withFetch() : withSdk());
process.stdout.write(`${JSON.stringify(outcomes)}\n`);
