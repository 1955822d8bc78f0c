/**
 * The PM2 deploy commands docs/deployment.md documents, run with the pm2 CLI against
 * ecosystem.config.cjs in a private PM2_HOME: both processes come up, a kill -9 of the
 * worker is restarted by PM2, and `pm2 stop` leaves no process and a free port.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { freePort, mintKey, portIsFree, waitFor } from '../support/harness.ts';
import { testKafka } from '../support/kafka-env.ts';
import { postToolCall } from '../support/tool-call.ts';
import { isAlive } from './support/processes.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const pm2Bin = join(root, 'node_modules', '.bin', 'pm2');
let pm2Home: string;
let dataDir: string;
let port: number;
let apiKey: string;
let opsPort: number;
let env: NodeJS.ProcessEnv;

/** Every pm2 command is bounded in time. */
async function pm2(...args: string[]): Promise<string> {
  const { stdout } = await run(pm2Bin, args, { cwd: root, env, timeout: 60_000, maxBuffer: 8 * 1024 * 1024 });
  return stdout;
}

async function apps(): Promise<Array<{ name: string; pid: number; status: string; restarts: number }>> {
  const list = JSON.parse(await pm2('jlist')) as Array<{
    name: string;
    pid: number;
    pm2_env: { status: string; restart_time: number };
  }>;
  return list.map((app) => ({
    name: app.name,
    pid: app.pid,
    status: app.pm2_env.status,
    restarts: app.pm2_env.restart_time,
  }));
}

/** GET /readyz on the ops listener: its status, or undefined while nothing listens. */
async function readiness(): Promise<number | undefined> {
  const res = await fetch(`http://127.0.0.1:${opsPort}/readyz`).catch(() => undefined);
  await res?.arrayBuffer();
  return res?.status;
}

async function workerReachable(): Promise<true | undefined> {
  const res = await postToolCall(`http://127.0.0.1:${port}/event/mcp`, apiKey, 'event_capabilities').catch(
    () => undefined,
  );
  if (!res?.ok) return undefined;
  const body = (await res.json()) as {
    result: { structuredContent: { details: { worker: { reachable: boolean } } } };
  };
  return body.result.structuredContent.details.worker.reachable || undefined;
}

before(async () => {
  pm2Home = await mkdtemp(join(tmpdir(), 'pm2-home-'));
  dataDir = await mkdtemp(join(tmpdir(), 'pm2-data-'));
  port = await freePort();
  opsPort = await freePort();
  env = {
    METRICS_PORT: String(opsPort),
    ...process.env,
    PM2_HOME: pm2Home,
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    BROKER_BOOTSTRAP_SERVERS: testKafka().plaintext,
    BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
  };
  apiKey = mintKey(dataDir, 'pm2', 'test').key;
});
after(async () => {
  await pm2('kill').catch(() => undefined);
  await rm(pm2Home, { recursive: true, force: true });
  await rm(dataDir, { recursive: true, force: true });
});

test('pm2 start ecosystem.config.cjs serves, restarts a killed worker, and pm2 stop leaves nothing behind', {
  timeout: 240_000,
}, async () => {
  await pm2('start', 'ecosystem.config.cjs');
  await waitFor(workerReachable, {
    what: 'the gateway to reach the worker under PM2',
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  await waitFor(async () => ((await readiness()) === 200 ? true : undefined), {
    what: 'GET /readyz to pass',
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  const started = await apps();
  assert.deepEqual(started.map((app) => [app.name, app.status]).sort(), [
    ['broker-worker', 'online'],
    ['gateway', 'online'],
  ]);

  const worker = started.find((app) => app.name === 'broker-worker')!;
  process.kill(worker.pid, 'SIGKILL');
  const restarted = await waitFor(
    async () => {
      const now = (await apps()).find((app) => app.name === 'broker-worker');
      return now && now.pid !== worker.pid && now.status === 'online' && now.restarts >= 1 ? now : undefined;
    },
    { what: 'PM2 to restart the worker', timeoutMs: 60_000, intervalMs: 100 },
  );
  assert.notEqual(restarted.pid, worker.pid);
  await waitFor(workerReachable, {
    what: 'the gateway to reach the restarted worker',
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  await waitFor(async () => ((await readiness()) === 200 ? true : undefined), {
    what: 'GET /readyz to pass again',
    timeoutMs: 60_000,
    intervalMs: 100,
  });

  const pids = (await apps()).map((app) => app.pid);
  await pm2('stop', 'ecosystem.config.cjs');
  await waitFor(() => pids.every((pid) => !isAlive(pid)) || undefined, {
    what: 'both processes to end',
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  assert.equal(await portIsFree(port), true);
  assert.deepEqual(
    (await apps()).map((app) => app.status),
    ['stopped', 'stopped'],
  );
});
