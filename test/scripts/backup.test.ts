/**
 * `npm run backup` as an operator runs it (bin/backup.mjs on the compiled tree), against a
 * real gateway process that keeps writing: keys made in the console and memories written
 * over MCP while the backup runs, a restore into a fresh DATA_DIR, and a gateway started
 * there that admits the keys and finds the memories.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { hashPassword } from '../../gateway/accounts/passwords.ts';
import type { BackupManifest } from '../../gateway/backup/manifest.ts';
import { ApiKeyStore } from '../../gateway/keys/store.ts';
import { keyStorePath } from '../../gateway/server.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { type GatewayProcess, startGatewayProcess } from '../support/gateway-process.ts';
import { type EmbeddingsServer, startEmbeddingsServer } from '../support/openai-embeddings.ts';

const root = join(import.meta.dirname, '..', '..');
const EMAIL = 'ops@example.com';
const PASSWORD = 'a long password for the backup test';

let work: string;
let embeddings: EmbeddingsServer;
let cliKey: string;
let env: Record<string, string>;

function backupCli(args: string[], dataDir: string, extraEnv: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [join(root, 'bin', 'backup.mjs'), ...args], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: '', DATA_DIR: dataDir, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function mcpClient(url: string, key: string): Promise<Client> {
  const client = new Client({ name: 'backup-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/memory/mcp`), {
      requestInit: { headers: { 'X-API-Key': key } },
    }),
  );
  return client;
}

async function consoleKey(url: string, label: string): Promise<string> {
  const pages = new ConsoleClient(url);
  assert.equal((await pages.signIn(EMAIL, PASSWORD)).status, 303);
  const page = await pages.post('/console/keys', {
    csrf: await pages.consoleCsrf(),
    label,
    namespace: 'memory',
  });
  assert.equal(page.status, 201);
  const key = /<output id="new-key">(mcp_[A-Za-z0-9_-]+)<\/output>/.exec(await page.text())?.[1];
  assert.ok(key);
  return key;
}

async function searchHits(client: Client, query: string): Promise<string[]> {
  const result = await client.callTool({ name: 'memory_search', arguments: { query } });
  return ((result.structuredContent as { hits: { content: string }[] }).hits ?? []).map((hit) => hit.content);
}

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'backup-test-'));
  embeddings = await startEmbeddingsServer({ apiKey: 'sk-test' });
  env = {
    MEMORY_EMBEDDINGS: 'openai',
    EMBEDDINGS_URL: embeddings.url,
    EMBEDDINGS_API_KEY: 'sk-test',
    EMBEDDINGS_DIMENSIONS: '32',
  };
  const store = new ApiKeyStore(keyStorePath(join(work, 'live')));
  cliKey = store.create('made by the CLI').key;
  await store.createAccount({ email: EMAIL, passwordHash: await hashPassword(PASSWORD), admin: true });
  await store.close();
});

after(async () => {
  await embeddings?.close();
  await rm(work, { recursive: true, force: true });
});

test('a backup taken while the gateway writes restores into a fresh DATA_DIR that serves the keys and memories', async (t) => {
  const live = join(work, 'live');
  const copy = join(work, 'backup');
  const fresh = join(work, 'fresh', 'data');
  let gateway: GatewayProcess | undefined = await startGatewayProcess({ ...env, DATA_DIR: live });
  let restored: GatewayProcess | undefined;
  try {
    const consoleMade = await consoleKey(gateway.url, 'made in the console');
    const writer = await mcpClient(gateway.url, consoleMade);
    const acknowledged: string[] = [];
    let writing = true;
    const writes = (async () => {
      for (let n = 0; writing; n += 1) {
        const content = `backup drill note ${n}: the quokka${n} ledger`;
        const result = await writer.callTool({ name: 'memory_write', arguments: { content } });
        assert.notEqual(result.isError, true, JSON.stringify(result.content));
        acknowledged.push(content);
      }
    })();
    while (acknowledged.length < 20) await new Promise((resolve) => setImmediate(resolve));

    const beforeBackup = acknowledged.length;
    const lateKey = consoleKey(gateway.url, 'made during the backup');
    const backup = await backupCli(['--to', copy], live);
    assert.equal(backup.code, 0, backup.stderr);
    await lateKey;
    writing = false;
    await writes;
    await writer.close();
    assert.ok(acknowledged.length > beforeBackup, 'the gateway kept writing while the backup ran');

    const manifest = JSON.parse(await readFile(join(copy, 'backup-manifest.json'), 'utf8')) as BackupManifest;
    assert.deepEqual(
      manifest.files.map((file) => file.name),
      ['api-keys.sqlite', 'memory.sqlite'],
    );
    for (const file of manifest.files) {
      assert.equal(file.bytes, statSync(join(copy, file.name)).size);
      assert.equal(file.integrity, 'ok');
      assert.ok(!existsSync(join(copy, `${file.name}-wal`)), 'each copy is one self-contained file');
    }
    assert.ok(Date.parse(manifest.finishedAt) >= Date.parse(manifest.startedAt));
    assert.match(backup.stdout, /api-keys\.sqlite: \d+ pages/);

    const inUse = await backupCli(['restore', '--from', copy, '--force'], live);
    assert.equal(inUse.code, 1);
    assert.match(inUse.stderr, /restore refused: .*in use: stop every gateway/);

    assert.equal((await backupCli(['restore', '--from', copy], fresh)).code, 0);
    const again = await backupCli(['restore', '--from', copy], fresh);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exist.*--force/);
    // --data-dir names the target before or after `restore`, whatever DATA_DIR says (here
    // the live stores, which a restore would refuse as in use).
    for (const [n, args] of [
      [1, ['restore', '--from', copy, '--data-dir', join(work, 'elsewhere-1')]],
      [2, ['--data-dir', join(work, 'elsewhere-2'), 'restore', '--from', copy]],
    ] as const) {
      const placed = await backupCli([...args], live);
      assert.equal(placed.code, 0, placed.stderr);
      assert.ok(existsSync(join(work, `elsewhere-${n}`, 'api-keys.sqlite')), `restored into elsewhere-${n}`);
    }

    restored = await startGatewayProcess({ ...env, DATA_DIR: fresh });
    const reader = await mcpClient(restored.url, consoleMade);
    for (const n of [0, 7, beforeBackup - 1]) {
      const hits = await searchHits(reader, `quokka${n}`);
      assert.ok(
        hits.includes(acknowledged[n]!),
        `memory ${n} is found after the restore: ${hits.join(' | ')}`,
      );
    }
    // One writer wrote in order: the snapshot holds a prefix of its writes, at least those
    // acknowledged before the backup started.
    const stats = await reader.callTool({ name: 'memory_stats', arguments: {} });
    const count = (stats.structuredContent as { count: number }).count;
    assert.ok(count >= beforeBackup && count <= acknowledged.length, `${count} memories restored`);
    const last = await searchHits(reader, `quokka${count - 1}`);
    assert.ok(last.includes(acknowledged[count - 1]!), last.join(' | '));
    t.diagnostic(`${beforeBackup} writes before the backup, ${count} in it, ${acknowledged.length} in all`);
    await reader.close();
    for (const key of [cliKey, consoleMade]) await (await mcpClient(restored.url, key)).close();
    assert.equal((await new ConsoleClient(restored.url).signIn(EMAIL, PASSWORD)).status, 303);

    await gateway.stop();
    gateway = undefined;
    const replaced = await backupCli(['restore', '--from', copy, '--force'], live);
    assert.equal(replaced.code, 0, replaced.stderr);
  } finally {
    await gateway?.stop();
    await restored?.stop();
  }
});

test('bad use and Postgres: usage errors exit 2, DATABASE_URL prints pg_dump guidance and copies nothing', async () => {
  const unknown = await backupCli(['--to', join(work, 'x'), '--bogus'], join(work, 'live'));
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown option '--bogus'[\s\S]*Usage: npm run backup --/);
  const missing = await backupCli([], join(work, 'live'));
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--to DIR/);
  const help = await backupCli(['restore', '--help'], join(work, 'live'));
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--from <dir>[\s\S]*--force/);

  const target = join(work, 'pg-backup');
  const postgres = await backupCli(['--to', target], join(work, 'live'), {
    DATABASE_URL: 'postgres://gateway@127.0.0.1:1/gateway',
  });
  assert.equal(postgres.code, 3);
  assert.match(postgres.stdout, /pg_dump --format=custom/);
  assert.match(postgres.stdout, /pg_restore --clean/);
  assert.ok(!existsSync(target));
});
