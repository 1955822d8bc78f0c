/**
 * deploy/systemd/*.service, checked by systemd's own parser (`systemd-analyze verify`): it
 * warns, and still exits 0, on an unknown key or a bad value (`ProtectSystem=strictt` is
 * ignored, leaving the service unprotected), so any output at all fails here. The units
 * must also start what the Procfile starts, the same node flags and compiled entry point,
 * and keep the sandbox options the processes were checked to tolerate.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { debianTool } from '../support/debian-tool.ts';

const exec = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const dir = join(root, 'deploy', 'systemd');
const UNITS = { 'mcp-broker-worker.service': 'broker-worker', 'mcp-gateway.service': 'gateway' } as const;
const analyze = await debianTool({ package: 'systemd', binary: 'systemd-analyze', how: 'install' });
const skip = analyze.skip;
if (skip) console.log(`# deploy/systemd: skipped: ${skip}`);

/** Every `Key=value` of a unit, in order (a key may repeat). */
function settings(text: string): Array<[string, string]> {
  return text
    .split('\n')
    .filter((line) => /^[A-Za-z]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]);
}

const setting = (text: string, key: string) => settings(text).find(([k]) => k === key)?.[1];

async function verify(files: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await exec(analyze.path!, ['verify', ...files], { cwd: dirname(files[0]!) });
    return (stdout + stderr).trim();
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return `exit ${(error as { code?: number }).code}: ${stdout}${stderr}`.trim();
  }
}

/**
 * Copies of the units for verify. verify checks that ExecStart's program exists: where node
 * is not /usr/bin/node (a Node from nvm or from .cache), the copy names this Node instead.
 */
async function unitsToVerify(work: string, mutate: (text: string) => string = (t) => t): Promise<string[]> {
  const files: string[] = [];
  for (const name of Object.keys(UNITS)) {
    let text = mutate(await readFile(join(dir, name), 'utf8'));
    if (!existsSync('/usr/bin/node'))
      text = text.replace(/^ExecStart=\/usr\/bin\/node /m, `ExecStart=${process.execPath} `);
    await writeFile(join(work, name), text);
    files.push(join(work, name));
  }
  return files;
}

test('systemd-analyze verify accepts both units without a word', { skip }, async () => {
  const work = await mkdtemp(join(tmpdir(), 'units-'));
  try {
    assert.equal(await verify(await unitsToVerify(work)), '');
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});

test('a misspelt key or a bad value is reported by verify (so the check above can fail)', {
  skip,
}, async () => {
  const work = await mkdtemp(join(tmpdir(), 'units-bad-'));
  try {
    const typo = await verify(
      await unitsToVerify(work, (t) => t.replace('ProtectSystem=strict', 'ProtectSystm=strict')),
    );
    assert.match(typo, /Unknown key 'ProtectSystm'/);
    const value = await verify(
      await unitsToVerify(work, (t) => t.replace('ProtectSystem=strict', 'ProtectSystem=strictt')),
    );
    assert.match(value, /protect system value/i);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});

test('each unit starts its Procfile line: the same node flags and compiled entry point', async () => {
  const procfile = await readFile(join(root, 'Procfile'), 'utf8');
  for (const [unit, entry] of Object.entries(UNITS)) {
    const text = await readFile(join(dir, unit), 'utf8');
    const line = procfile.match(new RegExp(`^${entry}: node (.+)$`, 'm'))?.[1];
    assert.ok(line, `the Procfile has no ${entry} line`);
    assert.equal(setting(text, 'ExecStart'), `/usr/bin/node ${line}`, unit);
    const script = line.split(' ').at(-1)!;
    assert.ok(existsSync(join(root, script)), `${script} is not in the tree`);
  }
});

test('the sandbox: read-only system, DATA_DIR writable, no privileges, no other home or /tmp', async () => {
  for (const unit of Object.keys(UNITS)) {
    const text = await readFile(join(dir, unit), 'utf8');
    const dataDir = setting(text, 'Environment')?.match(/^DATA_DIR=(.+)$/)?.[1];
    assert.ok(dataDir, `${unit} sets no DATA_DIR default`);
    const expected: Record<string, string> = {
      NoNewPrivileges: 'yes',
      ProtectSystem: 'strict',
      ReadWritePaths: dataDir,
      PrivateTmp: 'yes',
      ProtectHome: 'yes',
      PrivateDevices: 'yes',
      CapabilityBoundingSet: '',
      RestrictSUIDSGID: 'yes',
      SystemCallFilter: '@system-service',
      // The IPC socket lives in DATA_DIR, which the sandbox must leave the service user.
      StateDirectory: 'mcp-gateway',
    };
    for (const [key, value] of Object.entries(expected))
      assert.equal(setting(text, key), value, `${unit}: ${key}`);
    assert.equal(
      dataDir,
      `/var/lib/${setting(text, 'StateDirectory')}`,
      `${unit}: StateDirectory is DATA_DIR`,
    );
    // V8's JIT needs writable-then-executable pages.
    assert.equal(setting(text, 'MemoryDenyWriteExecute'), undefined, unit);
  }
});
