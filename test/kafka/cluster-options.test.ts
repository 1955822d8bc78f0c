/**
 * `npm run kafka -- start --brokers N` refusals: each is one line naming the cause, and
 * nothing is started or left behind. No broker runs here: every refusal comes before a JVM.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { nodeFiles } from '../../dev/kafka/files.ts';
import { planNodePorts } from '../../dev/kafka/ports.ts';
import { runCli } from '../support/cli.ts';

const dataDir = await mkdtemp(join(tmpdir(), 'local-kafka-options-'));
after(() => rm(dataDir, { recursive: true, force: true }));

/** Our own environment without a developer's LOCAL_KAFKA_* settings. */
const env = { LOCAL_KAFKA_BROKERS: '', LOCAL_KAFKA_PLAINTEXT_PORT: '', LOCAL_KAFKA_DATA_DIR: '' };

async function start(...args: string[]) {
  const result = await runCli('kafka', ['start', `--data-dir=${dataDir}`, ...args], { env });
  const lines = result.stderr.trim().split('\n');
  return { ...result, lines };
}

test('--brokers 0 and even counts are refused in one line that says why; nothing starts', async () => {
  const zero = await start('--brokers=0');
  assert.equal(zero.code, 1);
  assert.equal(zero.lines.length, 1, zero.stderr);
  assert.match(zero.lines[0]!, /--brokers 0 is refused: a cluster needs at least one broker/);

  const two = await start('--brokers=2');
  assert.equal(two.code, 1);
  assert.equal(two.lines.length, 1, two.stderr);
  assert.match(two.lines[0]!, /--brokers 2 is refused: .*no majority once one fails/);

  const four = await runCli('kafka', ['start', `--data-dir=${dataDir}`], {
    env: { ...env, LOCAL_KAFKA_BROKERS: '4' },
  });
  assert.equal(four.code, 1);
  assert.match(four.stderr, /--brokers 4 is refused: 4 controller voters survive no more failures than 3/);

  const word = await start('--brokers=three');
  assert.equal(word.code, 2);
  assert.match(word.stderr, /^--brokers: expected a whole number, got three/);
  assert.deepEqual(await readdir(dataDir), [], 'nothing was written to the data dir');
});

function occupy(port = 0): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => resolve(server));
  });
}

test('a taken port of any node is named in one line, and no broker starts', async () => {
  // Node 2's PLAINTEXT port is node 1's plus 10: taking it must stop the whole start.
  let base = 0;
  let taken: Server | undefined;
  for (let attempt = 0; attempt < 20 && !taken; attempt++) {
    const probe = await occupy();
    base = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    if (base + 10 > 65535) continue;
    taken = await occupy(base + 10).catch(() => undefined);
  }
  assert.ok(taken, 'found a free port pair');
  try {
    const result = await start(
      '--brokers=3',
      `--plaintext-port=${base}`,
      '--sasl-port=0',
      '--controller-port=0',
      '--sasl-ssl-port=off',
    );
    assert.equal(result.code, 1);
    assert.equal(result.lines.length, 1, result.stderr);
    assert.match(
      result.lines[0]!,
      new RegExp(`port ${base + 10} \\(node 2 PLAINTEXT listener\\) .* already in use`),
    );
    for (const id of [1, 2, 3])
      assert.equal(existsSync(nodeFiles(dataDir, 3, id).pidFile), false, `node ${id} did not start`);
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
});

test('a cluster node keeps its stored ports: port 0 means them, another port is refused', () => {
  const stored = { plaintext: 41000, saslPlaintext: 41001, controller: 41002, saslSsl: null };
  const defaults = { plaintext: 9092, saslPlaintext: 9094, controller: 9093, saslSsl: 9096 };
  const kept = planNodePorts({
    nodeId: 2,
    brokers: 3,
    wanted: { plaintext: 0, controller: 0 },
    defaults,
    withSsl: false,
    stored,
  });
  assert.deepEqual(
    kept.map((r) => r.port),
    [41000, 41001, 41002],
  );
  assert.ok(kept.every((r) => r.kept));
  const fresh = planNodePorts({
    nodeId: 3,
    brokers: 3,
    wanted: {},
    defaults,
    withSsl: true,
    stored: undefined,
  });
  assert.deepEqual(
    fresh.map((r) => r.port),
    [9112, 9114, 9113, 9116],
    'node 3 defaults to node 1 plus 20',
  );
  assert.throws(
    () =>
      planNodePorts({ nodeId: 2, brokers: 3, wanted: { plaintext: 9092 }, defaults, withSsl: false, stored }),
    /node 2 of this cluster keeps PLAINTEXT port 41000/,
  );
  // One broker may still be moved by naming a port, as before ports were stored.
  const moved = planNodePorts({
    nodeId: 1,
    brokers: 1,
    wanted: { plaintext: 9200 },
    defaults,
    withSsl: false,
    stored,
  });
  assert.equal(moved[0]!.port, 9200);
});
