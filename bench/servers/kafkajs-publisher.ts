/**
 * Baseline: what an application would do without the gateway, kafkajs producer.send of one
 * message per call (acks=all), CONCURRENCY calls in flight, for DURATION_MS.
 */
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { closedLoop } from '../stats.ts';
import { announce } from './ready.ts';

const concurrency = Number(process.env.CONCURRENCY ?? 64);
const durationMs = Number(process.env.DURATION_MS ?? 5000);
const topic = process.env.TOPIC ?? '';
// A cluster's bootstrap list is comma-separated, as `npm run kafka` prints it.
const kafka = new Kafka({ brokers: (process.env.BOOTSTRAP ?? '').split(','), logLevel: logLevel.NOTHING });
const producer = kafka.producer({ idempotent: true, createPartitioner: Partitioners.DefaultPartitioner });
await producer.connect();
const value = 'x'.repeat(1024);
await producer.send({ topic, acks: -1, messages: [{ key: 'warm', value }] });
const stats = await closedLoop(concurrency, durationMs, (key) =>
  producer.send({ topic, acks: -1, messages: [{ key, value }] }),
);
await producer.disconnect();
announce({ port: 0, ...stats });
