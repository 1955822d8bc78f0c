import { after, before, describe } from 'node:test';
import { PostgresMemoryStore } from '../../../gateway/namespaces/memory/store/postgres-store.ts';
import { startTestPostgres, type TestPostgres } from '../../support/postgres.ts';
import { memoryStoreSuite } from './store-suite.ts';

describe('memory store on Postgres (PGlite + pgvector through the pg driver)', () => {
  let pg: TestPostgres;
  let store: PostgresMemoryStore;
  before(async () => {
    pg = await startTestPostgres();
    store = new PostgresMemoryStore(pg.url, { max: 4 });
  });
  after(async () => {
    await store.close();
    await pg.close();
  });
  memoryStoreSuite('postgres', () => store);
});
