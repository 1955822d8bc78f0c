/**
 * The footprint bench's baseline for the broker worker: the least a process can do and
 * still be a broker worker as the design prescribes. It listens on a unix socket and
 * answers msgpack frames with msgpackr, logs through pino, and holds a kafkajs admin
 * client that describes the cluster every 2 s, as the worker's health probe does. None of
 * the worker's own code is loaded, so the worker's idle RSS minus this one is what the
 * project's code costs on top of its required libraries.
 *
 * Plain JavaScript on purpose: a TypeScript entry would need tsx in the process, which is
 * what the production tree avoids and would inflate the baseline.
 */
import { rmSync } from 'node:fs';
import net from 'node:net';
import { Kafka, logLevel } from 'kafkajs';
import { Packr } from 'msgpackr';
import pino from 'pino';

const socketPath = process.env.FLOOR_SOCKET;
const logger = pino({ level: process.env.LOG_LEVEL ?? 'warn' });
const packr = new Packr();

rmSync(socketPath, { force: true });
const server = net.createServer((socket) => {
  socket.on('data', (frame) => socket.write(packr.pack(packr.unpack(frame))));
});
await new Promise((resolve) => server.listen(socketPath, resolve));

const kafka = new Kafka({
  clientId: 'worker-floor',
  brokers: process.env.BROKER_BOOTSTRAP_SERVERS.split(','),
  logLevel: logLevel.NOTHING,
});
const admin = kafka.admin();
await admin.connect();
await admin.describeCluster();
setInterval(() => {
  admin.describeCluster().catch((error) => logger.warn({ err: error.message }, 'probe failed'));
}, 2000);

logger.info({ socketPath }, 'worker floor listening');
process.on('SIGTERM', () => {
  server.close();
  void admin.disconnect().finally(() => process.exit(0));
});
process.send?.('ready');
