/** Tables from `npm run bench -- event` (bench/results/event*.json). */
import type { PublishRow } from '../event.ts';
import type { ClusterResults } from '../event-cluster.ts';
import { table, times } from './markdown.ts';
import type { ResultFile } from './source.ts';

// The shapes the bench writes; a result file is read as the run that wrote it saw them.
interface EventRun {
  publish: PublishRow[];
  cluster?: ClusterResults;
}

/**
 * event_publish on one broker (RF 1) and on the three-broker cluster (RF 3,
 * min.insync.replicas=2, acks=all), and group polls on the cluster, each beside kafkajs on
 * the same broker(s) in the same run.
 */
export function eventClusterTable([file]: ResultFile[]): string {
  const run = file!.data as unknown as EventRun;
  const c = run.cluster;
  if (!c) throw new Error(`${file!.name} has no three-broker figures`);
  const where = `${c.brokers} brokers, RF ${c.replicationFactor}, min ISR ${c.minInsyncReplicas}`;
  const publish = (label: string) => (r: PublishRow) => [
    `event_publish c${r.concurrency} rps (p50/p99 ms), ${label}`,
    `${r.rps} (${r.p50Ms}/${r.p99Ms})`,
    `kafkajs send ${r.kafkajsRps} (${r.kafkajsP50Ms}/${r.kafkajsP99Ms})`,
    times(r.rps / r.kafkajsRps),
  ];
  const g = c.groupPoll;
  return table(
    ['measurement', 'ours', 'kafkajs (same run, same brokers)', 'ratio'],
    [
      ...run.publish.map(publish('1 broker, RF 1')),
      ...c.publish.map(publish(where)),
      [
        `group poll msgs/s, max 100 a poll, ${where} (polls/s, poll p50/p99 ms)`,
        `${g.messagesPerSecond} (${g.pollsPerSecond}, ${g.pollP50Ms}/${g.pollP99Ms})`,
        `consumer group, commit per batch ${g.kafkajsMessagesPerSecond}`,
        times(g.messagesPerSecond / g.kafkajsMessagesPerSecond),
      ],
      [
        `records drained / handed out twice (${where})`,
        `${g.messages} / ${g.duplicates}`,
        `${g.messages} / ${g.kafkajsDuplicates}`,
        '',
      ],
    ],
  );
}
