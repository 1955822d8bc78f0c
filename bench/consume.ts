/**
 * `npm run bench -- consume [--quick]`: only the event_consume part of `npm run bench`
 * (warm group polls beside a per-call consumer and the bare kafkajs commit), on its own
 * broker with Kafka's default 3000 ms rebalance delay, at the full bench's length (300
 * warm polls, 10 per-call consumers). Prints the rows and writes
 * bench/results/consume.json with the machine and its load average before and after,
 * since these latencies move with whatever else the host runs.
 */
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { startPrivateKafka } from '../dev/kafka/private-kafka.ts';
import { benchRoot } from './child.ts';
import { benchConsume, startStack } from './event.ts';
import { machineInfo } from './machine.ts';

const load = () => loadavg().map((n) => Math.round(n * 100) / 100);

export async function runConsumeSection(quick: boolean, log: (line: string) => void): Promise<void> {
  const plan = quick ? { warmPolls: 50, ephemeralPolls: 3 } : { warmPolls: 300, ephemeralPolls: 10 };
  const started = Date.now();
  const loadBefore = load();
  const { kafka, cleanup } = await startPrivateKafka(3000);
  try {
    const stack = await startStack(kafka.plaintext);
    const consume = await benchConsume(
      kafka.plaintext,
      stack,
      plan.warmPolls,
      plan.ephemeralPolls,
      log,
    ).finally(() => stack.stop());
    const results = {
      run: {
        mode: quick ? 'quick' : 'full',
        part: 'consume',
        date: new Date().toISOString(),
        seconds: Math.round((Date.now() - started) / 1000),
        machine: machineInfo(),
        loadAverageBefore: loadBefore,
        loadAverageAfter: load(),
      },
      consume,
    };
    const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
    console.log(
      [
        `event_consume warm p50 / p99 ms: ${consume.warmP50Ms} / ${consume.warmP99Ms} (${consume.warmPolls} polls)`,
        `per-call consumer p50 / p99 ms: ${consume.ephemeralP50Ms} / ${consume.ephemeralP99Ms} (${ratio(consume.ephemeralP50Ms, consume.warmP50Ms)}× slower)`,
        `bare kafkajs commitOffsets p50 / p99 ms: ${consume.commitFloorP50Ms} / ${consume.commitFloorP99Ms} (warm p50 is ${ratio(consume.warmP50Ms, consume.commitFloorP50Ms)}× the floor)`,
        `first poll of a new group: ${consume.firstPollMs} ms (${consume.firstPollCount} msgs)`,
        `load average before / after: ${loadBefore.join(' ')} / ${results.run.loadAverageAfter.join(' ')}`,
      ].join('\n'),
    );
    if (!quick) {
      const file = join(benchRoot, 'bench', 'results', 'consume.json');
      await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
      log(`wrote ${file}`);
    }
  } finally {
    await cleanup();
  }
}
