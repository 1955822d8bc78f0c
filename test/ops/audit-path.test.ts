/**
 * AUDIT_LOG=file: with a directory that cannot be made. Node's recursive mkdir tries a
 * level again from its parent whenever the level answers ENOENT, which a directory under
 * /proc always does: a start with `file:/proc/nonexistent/x` spun in the audit check for
 * good (record 0173). Now it stops the start with one line naming AUDIT_LOG, the
 * directory, and what to use instead. Real gateway processes, killed after a generous
 * bound; the assertion is that each exited by itself.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runGatewayToExit } from '../support/gateway-process.ts';

let dataDir: string;

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'audit-path-'));
});
after(() => rm(dataDir, { recursive: true, force: true }));

function gatewayEnv(audit: string): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    BROKER_WORKERS: `unix:${join(dataDir, 'no-worker.sock')}`,
    MEMORY_EMBEDDINGS: 'none',
    AUDIT_LOG: audit,
  };
}

const USE_INSTEAD =
  'use file: with a path in a directory that exists or that the gateway may make (none can be made under /proc or /sys), or AUDIT_LOG=stdout';

test('a path whose directory would be under /proc stops the start with one line naming AUDIT_LOG', async () => {
  // runGatewayToExit kills the child after 30 s: code null would say it never exited.
  const { code, output } = await runGatewayToExit(gatewayEnv('file:/proc/nonexistent/deeper/audit.log'));
  assert.equal(code, 1, output);
  const refused = output.split('\n').filter((line) => line.startsWith('gateway: AUDIT_LOG:'));
  assert.deepEqual(refused, [
    `gateway: AUDIT_LOG: cannot make the directory /proc/nonexistent for /proc/nonexistent/deeper/audit.log (ENOENT: no such file or directory, mkdir '/proc/nonexistent'); ${USE_INSTEAD}`,
  ]);
  assert.doesNotMatch(output, /gateway listening/);
});

test('a directory that cannot be made under a regular file is refused the same way', async () => {
  const file = join(dataDir, 'a-file');
  await writeFile(file, '');
  const { code, output } = await runGatewayToExit(gatewayEnv(`file:${file}/logs/audit.log`));
  assert.equal(code, 1, output);
  assert.match(
    output,
    new RegExp(
      `^gateway: AUDIT_LOG: cannot make the directory ${file}/logs for .* \\(ENOTDIR: .*\\); use file: with a path in a directory`,
      'm',
    ),
  );
});
