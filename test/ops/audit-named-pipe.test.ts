/**
 * AUDIT_LOG=file: on a named pipe. The audit stream's open (and its writes) ran on a libuv
 * thread that a pipe holds until a reader comes and reads: the gateway started, wrote no
 * line, logged "gateway stopped" on SIGTERM and then never exited (node's own exit waits on
 * that thread; only SIGKILL ended it). Now a pipe, read or not, or a path that cannot be
 * opened, stops the start with one line naming AUDIT_LOG, and a SIGHUP that finds a pipe at
 * the path keeps the file already open. Real gateway processes, real FIFOs (mkfifo).
 * Every child is killed after a generous bound; the assertions are that it exited by itself.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runGatewayToExit, startGatewayProcess } from '../support/gateway-process.ts';
import { waitFor } from '../support/harness.ts';
import { postToolsList } from '../support/tool-call.ts';

let dataDir: string;

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'audit-named-pipe-'));
});
after(() => rm(dataDir, { recursive: true, force: true }));

function gatewayEnv(auditPath: string): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    BROKER_WORKERS: `unix:${join(dataDir, 'no-worker.sock')}`,
    MEMORY_EMBEDDINGS: 'none',
    AUDIT_LOG: `file:${auditPath}`,
  };
}

function mkfifo(path: string): void {
  execFileSync('mkfifo', [path]);
}

/** The exit code and signal, or SIGKILL's once `boundMs` passed without an exit. */
function exitWithin(
  child: ChildProcess,
  boundMs: number,
): Promise<{ code: number | null; signal: string | null }> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), boundMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

const REFUSED_PIPE =
  /^gateway: AUDIT_LOG: .*audit\.fifo is a named pipe, .*use file: with a regular file .* or AUDIT_LOG=stdout$/m;

test('a named pipe nobody reads stops the start with one line naming AUDIT_LOG', async () => {
  const fifo = join(dataDir, 'unread', 'audit.fifo');
  await mkdir(join(dataDir, 'unread'));
  mkfifo(fifo);
  // runGatewayToExit kills the child after 30 s: code null would say it never exited.
  const { code, output } = await runGatewayToExit(gatewayEnv(fifo));
  assert.equal(code, 1, output);
  assert.match(output, REFUSED_PIPE);
  assert.doesNotMatch(output, /gateway listening/);
});

test('a named pipe that is read is refused as well: a reader that stalls would hold the exit', async () => {
  const fifo = join(dataDir, 'read', 'audit.fifo');
  await mkdir(join(dataDir, 'read'));
  mkfifo(fifo);
  // A reader that is there and never reads, as a log shipper whose output is down.
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const { code, output } = await runGatewayToExit(gatewayEnv(fifo));
    assert.equal(code, 1, output);
    assert.match(output, REFUSED_PIPE);
  } finally {
    closeSync(reader);
  }
});

test('a path that cannot be opened for writing stops the start, naming it', async () => {
  // A directory: the stream's open failed where nobody heard it, and every line was lost.
  const { code, output } = await runGatewayToExit(gatewayEnv(dataDir));
  assert.equal(code, 1, output);
  assert.match(
    output,
    /^gateway: AUDIT_LOG: cannot open .* for writing \(EISDIR: .*\); use a path the gateway may write$/m,
  );
});

test('SIGHUP reopens a moved file, keeps the open one when a named pipe is at the path; SIGTERM then exits 0', {
  timeout: 120_000,
}, async () => {
  const auditPath = join(dataDir, 'rotated', 'audit.log');
  const gw = await startGatewayProcess(gatewayEnv(auditPath));
  const exited = exitWithin(gw.child, 60_000);
  const refused = async () => {
    const answer = await postToolsList(`${gw.url}/event/mcp`, 'not-a-key');
    assert.equal(answer.status, 401);
    await answer.text();
  };
  const linesIn = (path: string, count: number) =>
    waitFor(
      async () => (await readFile(path, 'utf8').catch(() => '')).split('\n').filter(Boolean).length === count,
      { what: `${count} audit line(s) in ${path}` },
    );
  try {
    await refused();
    await linesIn(auditPath, 1);
    // logrotate's way: move the file, then SIGHUP; the next line starts a new file.
    await rename(auditPath, `${auditPath}.1`);
    gw.child.kill('SIGHUP');
    // The reopen creates the file before it opens it: the next line goes there.
    await waitFor(() => existsSync(auditPath), { what: 'the reopened audit file' });
    await refused();
    await linesIn(auditPath, 1);
    await linesIn(`${auditPath}.1`, 1);

    await rename(auditPath, `${auditPath}.2`);
    mkfifo(auditPath);
    gw.child.kill('SIGHUP');
    await waitFor(() => gw.lines.some((l) => l.includes('audit log not reopened')), {
      what: 'the gateway to log that it kept the open file',
    });
    await refused();
    await linesIn(`${auditPath}.2`, 2);

    gw.child.kill('SIGTERM');
    const { code, signal } = await exited;
    const log = gw.lines.join('\n');
    assert.equal(signal, null, `the gateway did not exit by itself:\n${log}`);
    assert.equal(code, 0, log);
    assert.match(
      log,
      /audit log not reopened, lines go on to the file already open: AUDIT_LOG: .* is a named pipe/,
    );
    assert.match(log, /gateway stopped/);
  } finally {
    gw.child.kill('SIGKILL');
  }
});
