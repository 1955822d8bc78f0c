import { after, before, describe } from 'node:test';
import { PostgresMemoryStore } from '../../../gateway/namespaces/memory/store/postgres-store.ts';
import { createTestDatabase, type TestPostgres } from '../../support/postgres.ts';
import { memoryStoreSuite } from './store-suite.ts';

describe('memory store on Postgres (native PostgreSQL 18 + pgvector through the pg driver)', () => {
  let pg: TestPostgres;
  let store: PostgresMemoryStore;
  before(async () => {
    pg = await createTestDatabase();
    store = new PostgresMemoryStore(pg.url, { max: 4 });
  });
  after(async () => {
    await store.close();
    await pg.close();
  });
  memoryStoreSuite('postgres', () => store);
});
