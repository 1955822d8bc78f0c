import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import { SqliteMemoryStore } from '../../../gateway/namespaces/memory/store/sqlite-store.ts';
import { memoryStoreSuite } from './store-suite.ts';

describe('memory store on SQLite', () => {
  let dir: string;
  let store: SqliteMemoryStore;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'memory-store-'));
    store = new SqliteMemoryStore(join(dir, 'memory.sqlite'));
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  memoryStoreSuite('sqlite', () => store);
});
