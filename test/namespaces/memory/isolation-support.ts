/**
 * What the cross-key memory tests share: tools/call over plain HTTP JSON-RPC (so a refused
 * key's HTTP status is seen, not hidden by a client library), keys minted in the state store
 * the gateway reads, and the file's two stores (SQLite and Postgres).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { StateStore } from '../../../gateway/accounts/model.ts';
import { FULL_SCOPES } from '../../../gateway/core/scopes.ts';
import { bothStateStores, type StateStoreEnv, type StateStoreKind } from '../../support/state-stores.ts';
import { postToolCall } from '../../support/tool-call.ts';

// biome-ignore lint/suspicious/noExplicitAny: structured results are checked field by field
export type Json = Record<string, any>;

export interface MemoryCalls {
  call(key: string, name: string, args?: Json): Promise<{ status: number; result?: Json }>;
  ok(key: string, name: string, args?: Json): Promise<Json>;
  /** The error's stable code and its text. */
  fails(key: string, name: string, args: Json): Promise<{ code: string; text: string }>;
}

export function memoryCalls(gatewayUrl: () => string): MemoryCalls {
  const calls: MemoryCalls = {
    async call(key, name, args = {}) {
      const response = await postToolCall(`${gatewayUrl()}/memory/mcp`, key, name, args);
      if (response.status !== 200) {
        await response.body?.cancel();
        return { status: response.status };
      }
      return { status: 200, result: ((await response.json()) as { result: Json }).result };
    },
    async ok(key, name, args = {}) {
      const { status, result } = await calls.call(key, name, args);
      assert.equal(status, 200, `${name} answered HTTP ${status}`);
      assert.notEqual(result!.isError, true, `${name} failed: ${JSON.stringify(result!.content)}`);
      return result!.structuredContent;
    },
    async fails(key, name, args) {
      const { status, result } = await calls.call(key, name, args);
      assert.equal(status, 200, `${name} answered HTTP ${status}`);
      assert.equal(
        result!.isError,
        true,
        `${name} should fail: ${JSON.stringify(result!.structuredContent)}`,
      );
      return { code: result!._meta?.['mcp-gateway/errorCode'], text: result!.content[0].text };
    },
  };
  return calls;
}

/** A new full-scope key of the operator account. */
export async function mint(state: StateStore, label: string): Promise<{ id: string; key: string }> {
  const ownerId = (await state.operatorAccount()).id;
  return state.createKey({ label, ownerId, scopes: FULL_SCOPES, expiresAt: null });
}

/**
 * The file's gateways: one on SQLite (a temporary DATA_DIR), one on Postgres (a database of
 * the file's own on the run's native server). They ran on SQLite only while the test engine
 * was PGlite, whose socket server mixed the statements of parallel connections under load.
 */
export function isolationStores(prefix: string): Record<StateStoreKind, () => StateStoreEnv> {
  return bothStateStores(prefix);
}

/** The store's internal row ids of these memories, read from the store itself. */
export async function rowIdsIn(env: StateStoreEnv, publicIds: string[]): Promise<number[]> {
  if (env.DATABASE_URL) {
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query(
        'SELECT id FROM memories WHERE public_id = ANY($1::uuid[]) ORDER BY id',
        [publicIds],
      );
      return rows.map((row: { id: string }) => Number(row.id));
    } finally {
      await client.end();
    }
  }
  const db = new Database(join(env.DATA_DIR, 'memory.sqlite'), { readonly: true });
  try {
    return (
      db
        .prepare('SELECT id FROM memories WHERE public_id IN (SELECT value FROM json_each(?)) ORDER BY id')
        .pluck()
        .all(JSON.stringify(publicIds)) as number[]
    ).map(Number);
  } finally {
    db.close();
  }
}
