/**
 * Memory on Postgres needs pgvector 0.8.0 or newer (iterative HNSW scans). On the native test
 * server: a database that sees no pgvector (as on a server without it) and one whose pgvector
 * reads as 0.7.4 are refused when the store starts, naming the extension; through a gateway,
 * memory answers SETTINGS_INVALID while keys and the other namespaces keep working.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import type { StateStore } from '../../../gateway/accounts/model.ts';
import { openStateStore } from '../../../gateway/accounts/open.ts';
import { plainWrite } from '../../../gateway/namespaces/memory/store/common.ts';
import {
  MIN_PGVECTOR,
  pgvectorRecentEnough,
} from '../../../gateway/namespaces/memory/store/postgres-pgvector.ts';
import { PostgresMemoryStore } from '../../../gateway/namespaces/memory/store/postgres-store.ts';
import { startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { createTestDatabase, type TestPostgres } from '../../support/postgres.ts';
import { postToolsList } from '../../support/tool-call.ts';
import { memoryCalls, mint } from './isolation-support.ts';

const write = { apiKeyId: 'k', input: plainWrite('a note') };

async function tableExists(url: string, name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query('SELECT to_regclass($1) AS t', [name])).rows[0].t !== null;
  } finally {
    await client.end();
  }
}

test('pgvector versions are compared part by part against 0.8.0', () => {
  assert.equal(MIN_PGVECTOR, '0.8.0');
  for (const ok of ['0.8.0', '0.8.6', '0.10.0', '1.0']) assert.equal(pgvectorRecentEnough(ok), true, ok);
  for (const old of ['0.7.4', '0.5.1', '0.7.99', 'dev']) assert.equal(pgvectorRecentEnough(old), false, old);
});

describe('the Postgres memory store at start-up', () => {
  const databases: TestPostgres[] = [];
  after(async () => {
    for (const db of databases) await db.close();
  });

  test('a server without pgvector is refused naming the extension, before any table is made', async () => {
    const db = await createTestDatabase({ withoutVector: true });
    databases.push(db);
    const store = new PostgresMemoryStore(db.url, { max: 2 });
    try {
      await assert.rejects(
        store.write(write.apiKeyId, write.input, 100, Date.now()),
        /the Postgres server has no pgvector \(extension "vector"\): install pgvector 0\.8\.0 or newer/,
      );
      // Asked again, it is refused again (not half-migrated and then let through).
      await assert.rejects(store.embeddingModel(), /no pgvector/);
    } finally {
      await store.close();
    }
    assert.equal(await tableExists(db.url, 'memories'), false);
  });

  test('a pgvector older than 0.8.0 is refused naming both versions', async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    // What a database whose pgvector was created at 0.7.4 reports (the catalog row is all
    // the check reads; no older library is installed on this server).
    await admin.query('CREATE EXTENSION vector');
    await admin.query("UPDATE pg_extension SET extversion = '0.7.4' WHERE extname = 'vector'");
    await admin.end();
    const store = new PostgresMemoryStore(db.url, { max: 2 });
    try {
      await assert.rejects(
        store.write(write.apiKeyId, write.input, 100, Date.now()),
        /pgvector \(extension "vector"\) 0\.7\.4, older than the 0\.8\.0 memory needs/,
      );
    } finally {
      await store.close();
    }
  });

  test('a fresh database with pgvector available gets the extension created by the store', async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const store = new PostgresMemoryStore(db.url, { max: 2 });
    try {
      const written = await store.write(write.apiKeyId, write.input, 100, Date.now());
      assert.equal(written.status, 'created');
    } finally {
      await store.close();
    }
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query("SELECT extversion FROM pg_extension WHERE extname = 'vector'");
    await client.end();
    assert.equal(rows[0]?.extversion, '0.8.6');
  });
});

describe('a gateway whose DATABASE_URL has no pgvector', () => {
  let db: TestPostgres;
  let dataDir: string;
  let gw: TestGateway;
  let state: StateStore;
  const { call, fails } = memoryCalls(() => gw.url);

  before(async () => {
    db = await createTestDatabase({ withoutVector: true });
    dataDir = await mkdtemp(join(tmpdir(), 'mcp-no-pgvector-'));
    const env = { DATA_DIR: dataDir, DATABASE_URL: db.url };
    gw = await startTestGateway({ dataDir, env: { ...env, MEMORY_EMBEDDINGS: 'none' } });
    state = await openStateStore(env);
  });
  after(async () => {
    await state?.close();
    await gw?.close();
    await db?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('memory answers SETTINGS_INVALID naming pgvector; keys and the other namespaces work', async () => {
    const { key } = await mint(state, 'no-pgvector');
    for (const [name, args] of [
      ['memory_write', { content: 'x' }],
      ['memory_search', { query: 'x' }],
    ] as const) {
      const refused = await fails(key, name, args);
      assert.equal(refused.code, 'SETTINGS_INVALID', `${name}: ${refused.text}`);
      assert.match(refused.text, /no pgvector \(extension "vector"\)/);
    }
    // The key was found in the same Postgres (the state store needs no pgvector), and another
    // namespace lists its tools.
    const listed = await postToolsList(`${gw.url}/skills/mcp`, key);
    assert.equal(listed.status, 200);
    const tools = ((await listed.json()) as { result: { tools: { name: string }[] } }).result.tools;
    assert.ok(tools.some((t) => t.name.startsWith('skills_')));
    assert.equal((await call('mcp-bad-key-for-sure', 'memory_write', { content: 'x' })).status, 401);
  });
});
