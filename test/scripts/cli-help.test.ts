/**
 * `npm run keys` and `npm run users` as shipped (the bin/ launchers over the compiled
 * dist/): every command and subcommand answers --help with its usage and the exit codes;
 * unknown commands and options, and a missing command, are usage errors (exit 2) that print
 * the usage.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { runCli } from '../support/cli.ts';

const root = join(import.meta.dirname, '..', '..');
const COMMANDS = {
  keys: ['create', 'list', 'show', 'update', 'revoke', 'rotate', 'prune'],
  users: ['list', 'create', 'reset-password', 'unlock', 'disable', 'enable', 'promote', 'demote'],
};

let dataDir: string;
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-cli-help-'));
});
after(() => rm(dataDir, { recursive: true, force: true }));

const cli = (tool: keyof typeof COMMANDS, args: string[]) =>
  runCli(tool, args, { env: { DATA_DIR: dataDir } });

test('npm run keys -- --help and npm run users -- --help answer through npm, exit 0', async () => {
  for (const tool of ['keys', 'users'] as const) {
    const { stdout } = await promisify(execFile)('npm', ['run', '--silent', tool, '--', '--help'], {
      cwd: root,
    });
    assert.match(stdout, new RegExp(`Usage: npm run ${tool} -- \\[options\\] \\[command\\]`));
    for (const command of COMMANDS[tool]) assert.match(stdout, new RegExp(`\\n {2}${command} `));
    assert.match(stdout, /Exit codes:\n {2}0 {2}done\n {2}1 {2}failed.*\n.*\n {2}2 {2}usage error/);
  }
});

test('every subcommand has --help (and help COMMAND) with its usage and the exit codes', async () => {
  for (const [tool, commands] of Object.entries(COMMANDS) as Array<[keyof typeof COMMANDS, string[]]>) {
    for (const command of commands) {
      for (const args of [
        [command, '--help'],
        ['help', command],
      ]) {
        const result = await cli(tool, args);
        assert.equal(result.code, 0, `${tool} ${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stdout, new RegExp(`Usage: npm run ${tool} -- ${command} `));
        assert.match(result.stdout, /Exit codes:/);
      }
    }
  }
  const rotate = await cli('keys', ['rotate', '--help']);
  assert.match(rotate.stdout, /--grace <duration>/);
  const create = await cli('users', ['create', '--help']);
  assert.match(create.stdout, /never taken as an argument/);
});

test('unknown commands and options, a missing command or argument: exit 2 with the usage', async () => {
  const cases: Array<[keyof typeof COMMANDS, string[], RegExp]> = [
    ['keys', ['frobnicate'], /error: unknown command 'frobnicate'/],
    ['keys', [], /Usage: npm run keys -- \[options\] \[command\]/],
    ['keys', ['list', '--colour'], /error: unknown option '--colour'/],
    ['keys', ['create', '--label', 'x', '--bogus'], /error: unknown option '--bogus'/],
    ['keys', ['rotate'], /error: missing required argument 'keyId'/],
    ['keys', ['create'], /error: required option '--label <label>' not specified/],
    ['keys', ['update', 'key_x'], /update needs at least one of --rate/],
    ['keys', ['list', 'extra'], /error: too many arguments/],
    ['users', ['remove', '--email', 'a@b.c'], /error: unknown command 'remove'/],
    ['users', [], /Usage: npm run users -- \[options\] \[command\]/],
    ['users', ['unlock'], /error: required option '--email <address>' not specified/],
    ['users', ['list', '--all'], /error: unknown option '--all'/],
  ];
  for (const [tool, args, message] of cases) {
    const result = await cli(tool, args);
    assert.equal(result.code, 2, `${tool} ${args.join(' ')}: ${result.stdout}${result.stderr}`);
    assert.match(result.stderr, message, `${tool} ${args.join(' ')}`);
    assert.match(
      result.stderr,
      new RegExp(`Usage: npm run ${tool} --`),
      `${tool} ${args.join(' ')} prints the usage`,
    );
    assert.equal(result.stdout, '');
  }
});

/** A shipped launcher run as operators run it, with the test's own DATA_DIR. */
function launcher(name: string, args: string[]) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(root, 'bin', `${name}.mjs`), ...args],
      { cwd: root, env: { ...process.env, DATA_DIR: dataDir }, timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('every other launcher answers --help without starting anything, and refuses what it does not know', async () => {
  for (const name of ['memory', 'backup', 'kafka']) {
    const help = await launcher(name, ['--help']);
    assert.equal(help.code, 0, `${name} --help: ${help.stderr}`);
    assert.match(help.stdout, /usage/i);
    const unknown = await launcher(name, ['no-such-command']);
    assert.equal(unknown.code, 2, `${name} no-such-command exits 2`);
    assert.match(unknown.stderr, /usage/i);
  }
  for (const name of ['memory']) {
    for (const command of ['fetch-model', 'reembed']) {
      const help = await launcher(name, [command, '--help']);
      assert.equal(help.code, 0);
      assert.match(help.stdout, new RegExp(`Usage: npm run memory -- ${command}`));
      assert.match(help.stdout, /Exit codes:/);
    }
  }
  // The servers take no arguments: --help describes them and exits before anything starts.
  for (const name of ['gateway', 'broker-worker', 'start']) {
    const help = await launcher(name, ['--help']);
    assert.equal(help.code, 0, `${name} --help: ${help.stderr}`);
    assert.match(help.stdout, new RegExp(`usage: node bin/${name}\\.mjs`));
    assert.match(help.stdout, /docs\/configuration\.md/);
    const unknown = await launcher(name, ['--port', '9']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unexpected argument "--port"[\s\S]*usage: node bin/);
  }
});
