/** Asks Kafka's own Java code which partition each key belongs to (see Murmur.java). */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { defaultCacheDir } from '../../../dev/kafka/paths.ts';

const run = promisify(execFile);

export async function javaPartitions(keys: string[], partitions: number): Promise<number[]> {
  const libs = join(defaultCacheDir, 'libs', '*');
  const hexKeys = keys.map((k) => Buffer.from(k, 'utf8').toString('hex'));
  const { stdout } = await run(
    'java',
    ['-cp', libs, join(import.meta.dirname, 'Murmur.java'), String(partitions), ...hexKeys],
    {
      timeout: 60_000,
    },
  );
  return stdout.trim().split('\n').map(Number);
}
