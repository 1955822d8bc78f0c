/**
 * The plain-JavaScript launcher every production command starts with (bin/*.mjs): it refuses
 * a Node outside package.json `engines`, naming the supported versions, and names the build
 * command when dist/ is missing. Run as real processes on a copy of the launcher beside a
 * package.json of the test's choosing.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { satisfiesEngines } from '../../bin/launch.mjs';

const root = join(import.meta.dirname, '..', '..');
const made: string[] = [];
after(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));

/** A tree holding only the launcher and a package.json with this engines range (no dist/). */
async function tree(range: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'launcher-'));
  made.push(dir);
  await mkdir(join(dir, 'bin'));
  for (const file of ['launch.mjs', 'gateway.mjs'])
    await copyFile(join(root, 'bin', file), join(dir, 'bin', file));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module', engines: { node: range } }));
  return dir;
}

function start(dir: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(dir, 'bin', 'gateway.mjs')], (error, _stdout, stderr) =>
      resolve({ code: error ? (error.code as number) : 0, stderr }),
    );
  });
}

test('the engines range in package.json admits this runtime (20, 22 and 24 are all tested)', async () => {
  const range = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')).engines.node as string;
  assert.equal(satisfiesEngines(process.versions.node, range), true);
  for (const version of ['20.18.0', '22.13.0', '24.0.0', '24.9.0'])
    assert.equal(satisfiesEngines(version, range), true);
  for (const version of ['18.20.0', '20.17.0', '21.7.3', '22.12.0', '23.11.0', '25.0.0']) {
    assert.equal(satisfiesEngines(version, range), false, version);
  }
});

test('a start on an unsupported Node prints the supported versions and exits non-zero', async () => {
  const dir = await tree('^18.0.0 || ^19.1.0');
  const { code, stderr } = await start(dir);
  assert.equal(code, 1);
  assert.match(
    stderr,
    new RegExp(`Node ${process.version} is not supported\\. Supported: \\^18\\.0\\.0, \\^19\\.1\\.0`),
  );
});

test('a start without a build prints the command that makes it and exits non-zero', async () => {
  const dir = await tree(`^${process.versions.node}`);
  const { code, stderr } = await start(dir);
  assert.equal(code, 1);
  assert.match(stderr, /No build found \(.*dist\/gateway\/main\.js is missing\)/);
  assert.match(stderr, /npm run build/);
});
