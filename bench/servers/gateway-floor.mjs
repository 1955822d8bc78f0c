/**
 * The footprint bench's baseline for the gateway: the libraries a gateway of this design
 * loads before serving its first request, in a bare process with none of the project's
 * code. It listens with uWebSockets.js, opens a SQLite file with better-sqlite3 (the key
 * store), checks one object with zod, packs an IPC frame with msgpackr and logs with pino.
 * prom-client and OpenTelemetry are not here: the gateway loads them only when configured
 * (METRICS_PORT, OTEL_EXPORTER_OTLP_ENDPOINT), and the footprint bench sets neither. The
 * gateway's idle RSS minus this one is what the project's own code costs.
 *
 * Plain JavaScript: a TypeScript entry would load tsx, which the production tree does not.
 */
import { join } from 'node:path';
import uws from '@trufflesuite/uws-js-unofficial';
import Database from 'better-sqlite3';
import { Packr } from 'msgpackr';
import pino from 'pino';
import { z } from 'zod';

const logger = pino({ level: process.env.LOG_LEVEL ?? 'warn' });
const db = new Database(join(process.env.DATA_DIR, 'gateway-floor.db'));
db.pragma('journal_mode = WAL');
db.exec('CREATE TABLE IF NOT EXISTS keys (id TEXT PRIMARY KEY, hash TEXT NOT NULL)');
const lookup = db.prepare('SELECT hash FROM keys WHERE id = ?');
const body = z.object({ jsonrpc: z.literal('2.0'), id: z.number(), method: z.string() });
const packr = new Packr();

const answer = Buffer.from('{"jsonrpc":"2.0","id":1,"result":{}}');
uws
  .App()
  .post('/*', (res, req) => {
    lookup.get(req.getHeader('x-api-key'));
    res.onAborted(() => {});
    res.onData((_chunk, last) => {
      if (!last) return;
      body.safeParse({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      packr.pack({ call: 'status' });
      res.cork(() => res.writeHeader('content-type', 'application/json').end(answer));
    });
  })
  .listen('127.0.0.1', 0, (token) => {
    if (!token) throw new Error('gateway floor: cannot listen');
    logger.info('gateway floor listening');
    process.send?.('ready');
  });
process.on('SIGTERM', () => process.exit(0));
