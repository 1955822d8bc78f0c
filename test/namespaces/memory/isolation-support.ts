/**
 * What the cross-key memory tests share: tools/call over plain HTTP JSON-RPC (so a refused
 * key's HTTP status is seen, not hidden by a client library), keys minted in the state store
 * the gateway reads, and a DATA_DIR for the file.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { StateStore } from '../../../gateway/accounts/model.ts';
import { FULL_SCOPES } from '../../../gateway/core/scopes.ts';

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
      const response = await fetch(`${gatewayUrl()}/memory/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-api-key': key,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name, arguments: args },
        }),
      });
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
 * A temporary DATA_DIR for the file's gateway (SQLite). These files run no gateway on
 * PGlite: under concurrent load its socket server mixes the statements of parallel
 * connections ("bind message supplies 2 parameters"), which failed calls at random as
 * STORE_UNAVAILABLE. The Postgres store's side of the same promises is in the store suite.
 */
export function sqliteDataDir(prefix: string): () => { DATA_DIR: string } {
  let dataDir = '';
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), prefix));
  });
  after(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });
  return () => ({ DATA_DIR: dataDir });
}
