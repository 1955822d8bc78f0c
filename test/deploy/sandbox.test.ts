/**
 * What deploy/systemd's sandbox promises, tried on the real processes: with the whole file
 * system read-only but DATA_DIR (ProtectSystem=strict + ReadWritePaths), a private /tmp
 * (PrivateTmp), no capabilities and no new privileges (CapabilityBoundingSet=,
 * NoNewPrivileges), the broker worker and the gateway start as the units start them, turn
 * ready, publish to Kafka, write a memory and embed it (the MiniLM threads lower their own
 * priority), and write their audit trail. systemd is not PID 1 here, so the same walls are
 * built with a private mount namespace, a chroot and setpriv. The system-call filter is
 * not reproduced (systemd-analyze verify checks its syntax only).
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { freePort, mintKey, waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';
import { setUpMiniLm } from '../support/minilm.ts';
import { postToolCall } from '../support/tool-call.ts';

const exec = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');

/** Why the walls cannot be built here, or undefined when they can. */
async function cannotSandbox(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'building the sandbox (mount namespace, chroot) needs root';
  try {
    await exec('unshare', ['--mount', '--propagation', 'private', 'setpriv', '--no-new-privs', 'true']);
    await exec('chroot', ['--help']);
  } catch (error) {
    return `no private mount namespace, chroot or setpriv here: ${(error as Error).message.slice(0, 200)}`;
  }
  return undefined;
}

const skip = await cannotSandbox();
if (skip) console.log(`# deploy sandbox: skipped: ${skip}`);

/**
 * Mounts a read-only view of every file system at $R (but /proc, /sys and /dev, which
 * systemd leaves writable too), a fresh tmpfs on its /tmp, DATA_DIR writable inside it;
 * then starts both processes in it with no capabilities, as the units' ExecStart lines do.
 */
const SCRIPT = `set -e
mount --rbind / "$R"
findmnt -R -n -r -o TARGET "$R" | while read -r m; do
  case "$m" in "$R"/proc*|"$R"/sys*|"$R"/dev*) continue ;; esac
  mount -o remount,bind,ro "$m" 2>/dev/null || true
done
mount -t tmpfs tmpfs "$R/tmp"
# A checkout under /tmp (a CI clone may be there) is bound back, read-only: a deployment's
# WorkingDirectory lies outside the private /tmp, and the walls stay the same.
case "$ROOT" in /tmp/*)
  mkdir -p "$R$ROOT"
  mount --bind "$ROOT" "$R$ROOT"
  mount -o remount,bind,ro "$R$ROOT" ;;
esac
mkdir -p "$R$DATA_DIR"
mount --bind "$DATA_DIR" "$R$DATA_DIR"
# The walls are checked before anything starts: a writable checkout would make the test pass for nothing.
exec chroot "$R" setpriv --no-new-privs --inh-caps=-all --ambient-caps=-all --bounding-set=-all \\
  sh -c 'if touch "$ROOT/.sandbox-probe" 2>/dev/null; then rm -f "$ROOT/.sandbox-probe"; echo "the checkout is writable: no sandbox"; exit 3; fi
    cd "$ROOT" && "$NODE" bin/broker-worker.mjs & cd "$ROOT" && exec "$NODE" --max-semi-space-size=1 bin/gateway.mjs'`;

async function call(url: string, key: string, name: string, args: Record<string, unknown>) {
  const response = await postToolCall(url, key, name, args);
  const text = await response.text();
  assert.equal(response.status, 200, text);
  const body = JSON.parse(text) as {
    result?: { isError?: boolean; structuredContent?: Record<string, unknown> };
  };
  assert.ok(body.result?.structuredContent && body.result.isError !== true, text);
  return body.result.structuredContent;
}

test("both processes serve inside the units' walls: read-only system, writable DATA_DIR, no privileges", {
  skip,
}, async () => {
  // The model the gateway embeds with, read from the read-only checkout as the unit reads its cache.
  await setUpMiniLm();
  const kafka = testKafka();
  const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-data-'));
  const sandboxRoot = await mkdtemp(join(tmpdir(), 'sandbox-root-'));
  const key = mintKey(dataDir, 'sandbox');
  const [port, opsPort] = [await freePort(), await freePort()];
  const socket = `unix:${join(dataDir, 'broker-worker.sock')}`;
  const child = spawn('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', SCRIPT], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      R: sandboxRoot,
      ROOT: root,
      NODE: process.execPath,
      DATA_DIR: dataDir,
      HOME: '/nonexistent',
      PORT: String(port),
      METRICS_PORT: String(opsPort),
      BROKER_WORKER_LISTEN: socket,
      BROKER_WORKERS: socket,
      BROKER_BOOTSTRAP_SERVERS: kafka.plaintext,
      BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
      BROKER_ALLOW_TOPIC_ADMIN: 'true',
      MEMORY_EMBEDDINGS: 'minilm',
      // Read-only here, as the checkout is under the unit; nothing may be fetched into it.
      MEMORY_MODEL_FETCH: 'off',
      AUDIT_LOG: `file:${join(dataDir, 'audit.log')}`,
      LOG_LEVEL: 'info',
    },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const ops = `http://127.0.0.1:${opsPort}`;
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`the sandbox exited:\n${output}`);
        return (await fetch(`${ops}/readyz`).catch(() => null))?.status === 200 ? true : undefined;
      },
      { what: '/readyz inside the sandbox', timeoutMs: 120_000, intervalMs: 200 },
    );
    const event = `http://127.0.0.1:${port}/event/mcp`;
    const topic = `sandbox-${randomUUID()}`;
    await call(event, key.key, 'event_create_topic', { topic, replication_factor: 1 });
    await call(event, key.key, 'event_publish', { topic, value: 'inside' });
    const memory = `http://127.0.0.1:${port}/memory/mcp`;
    const written = await call(memory, key.key, 'memory_write', { content: 'the sandbox holds' });
    const id = String(written.id);
    await waitFor(
      async () => {
        const got = await call(memory, key.key, 'memory_get', { id });
        return got.embedding_status === 'ready' ? true : undefined;
      },
      { what: "the memory's embedding inside the sandbox", timeoutMs: 120_000, intervalMs: 250 },
    );
    const audit = await readFile(join(dataDir, 'audit.log'), 'utf8');
    assert.match(audit, /"tool":"event_publish","outcome":"ok"/);
    assert.doesNotMatch(output, /EROFS|read-only file system|EACCES|EPERM|operation not permitted/i);
  } catch (error) {
    // What the processes said is the only clue to which wall they hit.
    throw new Error(`${(error as Error).message}\n--- the processes' output ---\n${output}`, {
      cause: error,
    });
  } finally {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGTERM');
    const code = await exited;
    await rm(sandboxRoot, { recursive: true, force: true });
    await rm(dataDir, { recursive: true, force: true });
    assert.equal(code, 0, output);
  }
});
