import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { ApiKeyAuthenticator } from '../../gateway/auth/api-key-auth.ts';
import { hashApiKey } from '../../gateway/core/api-key.ts';
import { FULL_SCOPES } from '../../gateway/core/scopes.ts';
import { ApiKeyStore } from '../../gateway/keys/store.ts';
import { compiledEntry } from '../support/compiled.ts';
import { elapse } from '../support/harness.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '../..');

test('keys are mcp_ plus 192 random bits, stored only as SHA-256 hashes', () => {
  const store = new ApiKeyStore(':memory:');
  const a = store.create('a');
  const b = store.create('b', 'owner-b');
  assert.match(a.key, /^mcp_[A-Za-z0-9_-]{32}$/);
  assert.notEqual(a.key, b.key);
  assert.deepEqual(store.findByHash(hashApiKey(a.key)), { id: a.id, revoked: false });
  assert.equal(b.owner, 'owner-b');
  assert.equal(a.owner, 'operator', 'a key minted without an owner belongs to the operator account');
  assert.ok(!JSON.stringify(store.list()).includes(a.key));
  store.close();
});

test('an admitted key stays cached at most the TTL; revocation is seen after it', async () => {
  const store = new ApiKeyStore(':memory:');
  const { key, id } = store.create('cached');
  const auth = new ApiKeyAuthenticator(store, { positiveTtlMs: 150, negativeMaxEntries: 10 });
  const ownerId = (await store.keyByHash(hashApiKey(key)))?.ownerId;
  assert.deepEqual(await auth.authenticate(key), {
    ok: true,
    apiKeyId: id,
    ownerId,
    scopes: FULL_SCOPES,
    limits: {},
  });
  store.revoke(id);
  assert.equal((await auth.authenticate(key)).ok, true, 'still cached within the TTL');
  // Elapsed time is the point: the 150 ms cache TTL must run out.
  await elapse(200);
  assert.deepEqual(await auth.authenticate(key), { ok: false, reason: 'revoked' });
  store.close();
});

test('an admitted key string is dropped from memory once its verdict expires, even if never presented again', async () => {
  const store = new ApiKeyStore(':memory:');
  const { key } = store.create('forgotten');
  const auth = new ApiKeyAuthenticator(store, { positiveTtlMs: 100, negativeMaxEntries: 10 });
  const admitted = (auth as unknown as { admitted: { size: number } }).admitted;
  assert.equal((await auth.authenticate(key)).ok, true);
  assert.equal(admitted.size, 1);
  // Elapsed time is the point: the verdict's TTL and one purge interval must pass.
  await elapse(350);
  assert.equal(admitted.size, 0);
  assert.equal((await auth.authenticate(key)).ok, true, 'a later request looks the key up again');
  store.close();
});

test('a flood of unregistered keys cannot grow the refusal cache past its bound', async () => {
  const store = new ApiKeyStore(':memory:');
  const auth = new ApiKeyAuthenticator(store, { positiveTtlMs: 1000, negativeMaxEntries: 50 });
  for (let i = 0; i < 1000; i++) {
    assert.equal((await auth.authenticate(`mcp_${String(i).padStart(32, 'x')}`)).ok, false);
  }
  const size = (auth as unknown as { refused: { size: number } }).refused.size;
  assert.equal(size, 50);
  store.close();
});

test('last used is recorded, but not written on every request', async () => {
  const store = new ApiKeyStore(':memory:');
  const { key } = store.create('touch');
  let touches = 0;
  const counting = {
    keyByHash: (hash: Buffer) => store.keyByHash(hash),
    touchKey: async (id: string, at: Date) => {
      touches += 1;
      store.touch(id, at);
    },
  };
  const auth = new ApiKeyAuthenticator(counting, { positiveTtlMs: 0, negativeMaxEntries: 10 });
  for (let i = 0; i < 100; i++) await auth.authenticate(key);
  assert.equal(touches, 1);
  assert.ok(store.list()[0]?.lastUsedAt);
  store.close();
});

test('the keys CLI creates (key shown once, with client config), lists without keys, and revokes', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'mcp-keys-cli-'));
  const env = { ...process.env, DATA_DIR: dataDir, PORT: '9999' };
  const cli = (...args: string[]) =>
    run(process.execPath, [compiledEntry('gateway/keys/cli.ts'), ...args], { cwd: root, env });
  try {
    const created = JSON.parse((await cli('create', '--label', 'ci bot', '--owner', 'ops', '--json')).stdout);
    assert.match(created.key, /^mcp_/);
    assert.equal(created.label, 'ci bot');
    assert.deepEqual(created.mcpServers.event, {
      type: 'http',
      url: 'http://127.0.0.1:9999/event/mcp',
      headers: { 'X-API-Key': created.key },
    });
    assert.equal(created.owner, 'ops', '--owner assigns the owning account');
    const scoped = JSON.parse(
      (
        await cli(
          'create',
          '--label',
          'reader',
          '--namespaces',
          'event',
          '--read-only',
          '--publish',
          '',
          '--consume',
          'orders.*',
          '--expires',
          '2999-01-01',
          '--json',
        )
      ).stdout,
    );
    assert.deepEqual(scoped.scopes, {
      namespaces: ['event'],
      readOnly: true,
      publishTopics: [],
      consumeTopics: ['orders.*'],
    });
    assert.equal(scoped.expiresAt, '2999-01-02T00:00:00.000Z');
    assert.deepEqual(
      Object.keys(scoped.mcpServers),
      ['event'],
      'client config only for namespaces the key may use',
    );
    await assert.rejects(cli('create', '--label', 'x', '--namespaces', 'nope'), /no namespace named nope/);
    await assert.rejects(cli('create', '--label', 'x', '--expires', '2001-01-01'), /today or later/);
    const human = (await cli('create', '--label', 'human')).stdout;
    assert.match(human, /shown only this once/);
    assert.match(human, /"mcpServers"/);

    const listed = (await cli('list')).stdout;
    assert.match(listed, new RegExp(created.id));
    assert.ok(!listed.includes(created.key), 'list never prints a key');

    await cli('revoke', created.id);
    const records = JSON.parse((await cli('list', '--json')).stdout);
    assert.ok(records.find((r: { id: string; revokedAt: string | null }) => r.id === created.id).revokedAt);
    await assert.rejects(cli('revoke', 'key_nope'), /no key with id/);
    await assert.rejects(cli('create'), /--label/);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
