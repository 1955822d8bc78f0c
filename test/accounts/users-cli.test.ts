import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../support/cli.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { startTestGateway } from '../support/gateway.ts';

const users = (dataDir: string, args: string[], stdin = '') =>
  runCli('users', args, { env: { DATA_DIR: dataDir }, stdin });

test('npm run users creates the first admin from stdin; that account signs in to the console', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-users-cli-'));
  try {
    const created = await users(
      dataDir,
      ['create', '--email', 'Root@Example.com', '--admin'],
      'a fine long password\n',
    );
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /created admin account root@example.com/);
    assert.ok(!created.stdout.includes('a fine long password'));

    const again = await users(dataDir, ['create', '--email', 'root@example.com'], 'another long password');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exists/);
    const short = await users(dataDir, ['create', '--email', 'short@example.com'], 'short');
    assert.equal(short.code, 1);
    assert.match(short.stderr, /at least 10 characters/);
    const noEmail = await users(dataDir, ['create']);
    assert.equal(noEmail.code, 2);
    assert.match(noEmail.stderr, /--email/);

    const listed = JSON.parse((await users(dataDir, ['list', '--json'])).stdout);
    assert.deepEqual(
      listed.map((a: { email: string; admin: boolean }) => [a.email, a.admin]),
      [['root@example.com', true]],
    );
    assert.ok(!JSON.stringify(listed).includes('argon2'), 'listings carry no password hash');

    const gw = await startTestGateway({ dataDir });
    try {
      const client = new ConsoleClient(gw.url);
      assert.equal((await client.signIn('root@example.com', 'a fine long password')).status, 303);
      const page = await (await client.get('/console')).text();
      assert.match(page, /Accounts/, 'the CLI-made admin manages accounts');

      const disabled = await users(dataDir, ['disable', '--email', 'root@example.com']);
      assert.equal(disabled.code, 0, disabled.stderr);
      assert.equal((await client.get('/console')).status, 303, 'disabling ends the session');
      assert.equal((await client.signIn('root@example.com', 'a fine long password')).status, 401);
      assert.equal((await users(dataDir, ['enable', '--email', 'root@example.com'])).code, 0);
      assert.equal((await client.signIn('root@example.com', 'a fine long password')).status, 303);
    } finally {
      await gw.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
