/**
 * A real Postgres engine for one test file, without a server install: PGlite (PostgreSQL
 * compiled to WASM) with the pgvector extension, served on a free loopback port by
 * pglite-socket so the product's own `pg` driver connects to it over the wire protocol.
 * Start one per file; it takes about two seconds. Several connections are accepted; each
 * one's message groups and open transactions run together on the one engine
 * (pglite-queue.ts).
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { MessageGroupQueue } from './pglite-queue.ts';

export interface TestPostgres {
  /** A postgres:// URL for DATABASE_URL. */
  url: string;
  close(): Promise<void>;
}

export async function startTestPostgres(): Promise<TestPostgres> {
  const db = await PGlite.create({ extensions: { vector } });
  // The vector extension is created here so a failure to load it surfaces in set-up,
  // not as a confusing error in the first test that stores an embedding.
  await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 32 });
  // Handlers take the server's queue when they connect, so it is replaced before any do.
  (server as unknown as { queryQueue: MessageGroupQueue }).queryQueue = new MessageGroupQueue(db);
  await server.start();
  const port = (server as unknown as { port: number }).port;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async close() {
      await server.stop();
      await db.close();
    },
  };
}
