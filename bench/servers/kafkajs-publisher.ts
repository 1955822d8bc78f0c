/**
 * Baseline: what an application would do without the gateway, kafkajs producer.send of one
 * message per call (acks=all), CONCURRENCY calls in flight, for DURATION_MS.
 */
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { summarize } from '../stats.ts';
import { announce } from './ready.ts';

const concurrency = Number(process.env.CONCURRENCY ?? 64);
const durationMs = Number(process.env.DURATION_MS ?? 5000);
const topic = process.env.TOPIC ?? '';
const kafka = new Kafka({ brokers: [process.env.BOOTSTRAP ?? ''], logLevel: logLevel.NOTHING });
const producer = kafka.producer({ idempotent: true, createPartitioner: Partitioners.DefaultPartitioner });
await producer.connect();
const value = 'x'.repeat(1024);
const latencies: number[] = [];
await producer.send({ topic, acks: -1, messages: [{ key: 'warm', value }] });
const ends = performance.now() + durationMs;
let sequence = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (performance.now() < ends) {
      const started = performance.now();
      sequence += 1;
      await producer.send({ topic, acks: -1, messages: [{ key: `k${sequence % 64}`, value }] });
      latencies.push(performance.now() - started);
    }
  }),
);
await producer.disconnect();
announce({ port: 0, ...summarize(latencies, durationMs) });
