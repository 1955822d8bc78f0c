/**
 * PGlite (PostgreSQL compiled to WASM) with pgvector, served on a free loopback port by
 * pglite-socket. Every product test runs on the native server (postgres.ts); this stays only
 * for the tests of the PGlite engine's own message queue (pglite-queue.test.ts), which keeps
 * each connection's message groups and open transactions together on the one engine.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { MessageGroupQueue } from './pglite-queue.ts';

export interface PgliteServer {
  /** A postgres:// URL for DATABASE_URL. */
  url: string;
  close(): Promise<void>;
}

export async function startPglite(): Promise<PgliteServer> {
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
