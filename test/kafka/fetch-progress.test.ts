/** The Kafka jar fetch's progress reads Maven's own batch-mode transfer lines. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseTransfer } from '../../dev/kafka/fetch-progress.ts';

test("Maven's finished downloads are counted with their size; every other line is not", () => {
  const base = 'https://repo.maven.apache.org/maven2/org/apache/kafka';
  assert.deepEqual(
    parseTransfer(
      `[INFO] Downloaded from central: ${base}/kafka-clients/4.1.1/kafka-clients-4.1.1.jar (9.9 MB at 12 MB/s)`,
    ),
    { file: 'kafka-clients-4.1.1.jar', bytes: 9.9e6 },
  );
  assert.deepEqual(
    parseTransfer(
      `Downloaded from central: ${base}/kafka_2.13/4.1.1/kafka_2.13-4.1.1.pom (7.5 kB at 100 kB/s)`,
    ),
    {
      file: 'kafka_2.13-4.1.1.pom',
      bytes: 7500,
    },
  );
  assert.deepEqual(parseTransfer(`Downloaded from mirror: ${base}/x/1/x-1.sha1 (40 B at 1 kB/s)`), {
    file: 'x-1.sha1',
    bytes: 40,
  });
  assert.equal(
    parseTransfer(`[INFO] Downloading from central: ${base}/kafka-clients/4.1.1/kafka-clients-4.1.1.jar`),
    null,
  );
  assert.equal(parseTransfer('[INFO] Scanning for projects...'), null);
});
