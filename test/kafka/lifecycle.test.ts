/**
 * The `npm run kafka` lifecycle on its own broker (own data dir, free ports), so it never touches
 * the run's shared broker or a developer's broker on 9092.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { brokerFiles } from '../../dev/kafka/files.ts';
import {
  LocalKafkaError,
  localKafkaStatus,
  startLocalKafka,
  stopLocalKafka,
} from '../../dev/kafka/local-kafka.ts';
import { reservePorts } from '../../dev/kafka/ports.ts';
import { compiledEntry } from '../support/compiled.ts';

const root = join(import.meta.dirname, '..', '..');

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [compiledEntry('dev/kafka/cli.ts'), ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const dataDir = await mkdtemp(join(tmpdir(), 'local-kafka-lifecycle-'));
const otherDir = await mkdtemp(join(tmpdir(), 'local-kafka-lifecycle-other-'));

after(async () => {
  // Whatever failed above, no broker may outlive the test file.
  await stopLocalKafka(dataDir);
  await rm(dataDir, { recursive: true, force: true });
  await rm(otherDir, { recursive: true, force: true });
});

test('start, status, port taken, stop, stop again', { timeout: 150_000 }, async (t) => {
  const [plaintext, sasl, controller] = await reservePorts([
    { name: 'PLAINTEXT', port: 0, flag: '' },
    { name: 'SASL_PLAINTEXT', port: 0, flag: '' },
    { name: 'CONTROLLER', port: 0, flag: '' },
  ]);
  const portArgs = [
    `--plaintext-port=${plaintext}`,
    `--sasl-port=${sasl}`,
    `--controller-port=${controller}`,
    // No TLS listener here: the shared broker's tests cover it, and keytool costs seconds.
    '--sasl-ssl-port=off',
    '--user=tester:tester-secret',
  ];

  await t.test('start returns with the broker running detached', async () => {
    const started = await cli(['start', `--data-dir=${dataDir}`, ...portArgs]);
    assert.equal(started.code, 0, started.stderr);
    assert.match(started.stdout, new RegExp(`PLAINTEXT +127\\.0\\.0\\.1:${plaintext}`));
    assert.match(started.stdout, new RegExp(`SASL_PLAINTEXT +127\\.0\\.0\\.1:${sasl}`));
    assert.doesNotMatch(started.stdout, /SASL_SSL/);
  });

  const status = await localKafkaStatus(dataDir);
  assert.ok(status.running && status.serving, 'the broker answers after start returned');
  const { pid } = status;

  await t.test('status says running, with addresses', async () => {
    const result = await cli(['status', `--data-dir=${dataDir}`]);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /Kafka is running/);
    assert.match(result.stdout, new RegExp(`127\\.0\\.0\\.1:${plaintext}`));
    assert.match(result.stdout, /tester:tester-secret/);
  });

  await t.test('start again says it is already running and succeeds', async () => {
    const result = await cli(['start', `--data-dir=${dataDir}`, ...portArgs]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /already running/);
  });

  await t.test('a second broker on the same ports fails clearly, naming the port', async () => {
    const result = await cli(['start', `--data-dir=${otherDir}`, ...portArgs]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, new RegExp(`port ${plaintext} \\(PLAINTEXT listener\\) .* already in use`));
    assert.match(result.stderr, /--plaintext-port/);

    await assert.rejects(
      startLocalKafka({
        dataDir: otherDir,
        plaintextPort: 0,
        saslPlaintextPort: sasl,
        controllerPort: 0,
        saslSslPort: null,
      }),
      (error: unknown) => {
        assert.ok(error instanceof LocalKafkaError);
        assert.equal(error.code, 'PORT_IN_USE');
        assert.match(error.message, new RegExp(`port ${sasl} \\(SASL_PLAINTEXT listener\\)`));
        return true;
      },
    );
    assert.equal(existsSync(brokerFiles(otherDir).pidFile), false, 'nothing was started');
  });

  await t.test('the API refuses a second broker on a running data dir', async () => {
    await assert.rejects(startLocalKafka({ dataDir, saslSslPort: null }), (error: unknown) => {
      assert.ok(error instanceof LocalKafkaError);
      assert.equal(error.code, 'ALREADY_RUNNING');
      return true;
    });
  });

  await t.test('stop stops it gracefully', async () => {
    const result = await cli(['stop', `--data-dir=${dataDir}`]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Kafka stopped/);
    assert.equal(alive(pid), false);
    assert.equal(existsSync(brokerFiles(dataDir).pidFile), false);
    assert.equal(
      existsSync(join(dataDir, 'kraft-logs', '.kafka_cleanshutdown')),
      true,
      'clean shutdown marker',
    );
  });

  await t.test(
    'start again with port 0 serves the same ports and listeners (the data dir keeps them)',
    async () => {
      const again = await cli([
        'start',
        `--data-dir=${dataDir}`,
        '--plaintext-port=0',
        '--sasl-port=0',
        '--controller-port=0',
        '--user=tester:tester-secret',
      ]);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, new RegExp(`PLAINTEXT +127\\.0\\.0\\.1:${plaintext}\n`));
      assert.match(again.stdout, new RegExp(`SASL_PLAINTEXT +127\\.0\\.0\\.1:${sasl} `));
      assert.doesNotMatch(again.stdout, /SASL_SSL/, 'no TLS listener, as at the first start');
      const stopped = await cli(['stop', `--data-dir=${dataDir}`]);
      assert.equal(stopped.code, 0, stopped.stderr);
    },
  );

  await t.test('stop again is fine, and status says not running', async () => {
    const again = await cli(['stop', `--data-dir=${dataDir}`]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /not running/);
    const result = await cli(['status', `--data-dir=${dataDir}`]);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /not running/);
  });
});
