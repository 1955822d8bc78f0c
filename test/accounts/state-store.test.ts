/** One suite, both adapters: SQLite in a temp dir, Postgres as a database of its own on the run's native server. */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { StateStore } from '../../gateway/accounts/model.ts';
import { openStateStore, stateStorePath } from '../../gateway/accounts/open.ts';
import { ApiKeyAuthenticator } from '../../gateway/auth/api-key-auth.ts';
import { generateApiKey, hashApiKey } from '../../gateway/core/api-key.ts';
import { FULL_SCOPES } from '../../gateway/core/scopes.ts';
import { Database } from '../../gateway/store/sqlite-driver.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { startTestGateway } from '../support/gateway.ts';
import { createTestDatabase, type TestPostgres } from '../support/postgres.ts';

let postgres: TestPostgres;
let dataDir: string;
before(async () => {
  postgres = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-state-store-'));
});
after(async () => {
  await postgres?.close();
  await rm(dataDir, { recursive: true, force: true });
});

const adapters = {
  sqlite: () => openStateStore({ DATA_DIR: dataDir }),
  postgres: () => openStateStore({ DATA_DIR: dataDir, DATABASE_URL: postgres.url }),
};

for (const [kind, open] of Object.entries(adapters)) {
  describe(`state store: ${kind}`, () => {
    let store: StateStore;
    before(async () => {
      store = await open();
    });
    after(() => store.close());

    test('opens the adapter DATABASE_URL selects, and reopening is harmless', async () => {
      assert.equal(store.kind, kind);
      const again = await open();
      await again.close();
    });

    test('accounts: emails are case-insensitive and unique; lockout counts persist', async () => {
      const account = await store.createAccount({
        email: ' Lin@Example.com',
        passwordHash: 'h',
        admin: true,
      });
      assert.equal(account.email, 'lin@example.com');
      assert.equal(account.admin, true);
      assert.equal(account.hasPassword, true);
      await assert.rejects(
        store.createAccount({ email: 'LIN@example.com', passwordHash: null, admin: false }),
      );
      const found = await store.accountByEmail('LIN@EXAMPLE.COM');
      assert.equal(found?.id, account.id);
      assert.equal(found?.passwordHash, 'h');
      assert.equal(await store.recordSignInFailure(account.id, null), 1);
      const until = new Date(Date.now() + 60_000).toISOString();
      assert.equal(await store.recordSignInFailure(account.id, until), 2);
      assert.equal((await store.accountById(account.id))?.lockedUntil, until);
      await store.clearSignInFailures(account.id);
      const cleared = await store.accountById(account.id);
      assert.equal(cleared?.failedSignIns, 0);
      assert.equal(cleared?.lockedUntil, null);
      assert.ok(await store.setAccountDisabled(account.id, true));
      assert.ok((await store.accountById(account.id))?.disabledAt);
      assert.equal(await store.setAccountDisabled('acct_none', true), false);
      await store.setAccountDisabled(account.id, false);
      await store.linkOidcSubject(account.id, 'https://issuer|sub-1');
      assert.equal((await store.accountByOidcSubject('https://issuer|sub-1'))?.id, account.id);
      const listed = await store.listAccounts();
      assert.ok(listed.some((a) => a.id === account.id));
      assert.ok(!JSON.stringify(listed).includes('"passwordHash"'), 'listings carry no hashes');
    });

    test('sessions are found by hash only, and end individually or per account', async () => {
      const account = await store.createAccount({
        email: `s-${kind}@example.com`,
        passwordHash: 'h',
        admin: false,
      });
      const session = {
        accountId: account.id,
        csrfToken: 'c',
        createdAt: new Date().toISOString(),
        expiresAt: new Date(Date.now() + 1000).toISOString(),
      };
      const a = hashApiKey('token-a');
      const b = hashApiKey('token-b');
      await store.createSession(a, session);
      await store.createSession(b, session);
      assert.deepEqual(await store.sessionByHash(a), session);
      await store.deleteSession(a);
      assert.equal(await store.sessionByHash(a), undefined);
      assert.ok(await store.sessionByHash(b));
      await store.deleteSessionsOf(account.id);
      assert.equal(await store.sessionByHash(b), undefined);
      const ended = hashApiKey('token-ended');
      await store.createSession(ended, { ...session, expiresAt: new Date(Date.now() - 1).toISOString() });
      await store.createSession(a, session);
      await store.purgeExpiredSessions(new Date());
      assert.equal(await store.sessionByHash(ended), undefined);
      assert.ok(await store.sessionByHash(a), 'live sessions stay');
    });

    test('keys: owner, scopes and expiry stored; only the hash kept; revocation scoped to the owner', async () => {
      const owner = await store.createAccount({
        email: `k-${kind}@example.com`,
        passwordHash: 'h',
        admin: false,
      });
      const other = await store.createAccount({
        email: `o-${kind}@example.com`,
        passwordHash: 'h',
        admin: false,
      });
      const scopes = { namespaces: ['event'], readOnly: true, publishTopics: [], consumeTopics: ['a.*'] };
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
      const created = await store.createKey({ label: 'bot', ownerId: owner.id, scopes, expiresAt });
      assert.match(created.key, /^mcp_/);
      assert.equal(created.owner, owner.email);
      assert.deepEqual(created.scopes, scopes);
      assert.equal(created.expiresAt, expiresAt);
      const principal = await store.keyByHash(hashApiKey(created.key));
      assert.deepEqual(principal, {
        id: created.id,
        ownerId: owner.id,
        revoked: false,
        ownerDisabled: false,
        expiresAt,
        scopes,
        limits: {},
      });
      assert.equal(await store.keyByHash(hashApiKey(generateApiKey())), undefined);
      const own = await store.listKeys(owner.id);
      assert.deepEqual(
        own.map((k) => k.id),
        [created.id],
      );
      assert.ok(!JSON.stringify(own).includes(created.key));
      assert.ok((await store.listKeys()).length >= 1);
      await store.touchKey(created.id, new Date());
      assert.ok((await store.keyById(created.id))?.lastUsedAt);

      assert.equal(await store.revokeKey(created.id, other.id), false, 'not the owner');
      assert.equal(await store.revokeKey(created.id, owner.id), true);
      const firstRevocation = (await store.keyById(created.id))?.revokedAt;
      assert.ok(firstRevocation);
      assert.equal(await store.revokeKey(created.id), true);
      assert.equal((await store.keyById(created.id))?.revokedAt, firstRevocation, 'the first time is kept');
      assert.equal((await store.keyByHash(hashApiKey(created.key)))?.revoked, true);
    });

    test('the authenticator refuses expired keys and keys of disabled accounts', async () => {
      const owner = await store.createAccount({
        email: `a-${kind}@example.com`,
        passwordHash: 'h',
        admin: false,
      });
      const live = await store.createKey({
        label: 'live',
        ownerId: owner.id,
        scopes: FULL_SCOPES,
        expiresAt: null,
      });
      const past = new Date(Date.now() - 1000).toISOString();
      const old = await store.createKey({
        label: 'old',
        ownerId: owner.id,
        scopes: FULL_SCOPES,
        expiresAt: past,
      });
      const auth = new ApiKeyAuthenticator(store, {
        positiveTtlMs: 0,
        negativeMaxEntries: 10,
        negativeTtlMs: 0,
      });
      assert.deepEqual(await auth.authenticate(live.key), {
        ok: true,
        apiKeyId: live.id,
        ownerId: owner.id,
        scopes: FULL_SCOPES,
        limits: {},
      });
      assert.deepEqual(await auth.authenticate(old.key), { ok: false, reason: 'expired' });
      await store.setAccountDisabled(owner.id, true);
      assert.deepEqual(await auth.authenticate(live.key), { ok: false, reason: 'owner_disabled' });
    });

    test('the operator account exists once, cannot sign in, and owns server-minted keys', async () => {
      const first = await store.operatorAccount();
      const second = await store.operatorAccount();
      assert.equal(first.id, second.id);
      assert.equal(first.hasPassword, false);
    });
  });
}

test('a key file from before accounts keeps its keys: they move to the operator with full scopes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mcp-state-legacy-'));
  try {
    const legacy = new Database(stateStorePath(dir));
    legacy.exec(`CREATE TABLE api_keys (id TEXT PRIMARY KEY, key_hash BLOB NOT NULL UNIQUE, label TEXT NOT NULL,
      owner TEXT, created_at TEXT NOT NULL, last_used_at TEXT, revoked_at TEXT)`);
    const key = generateApiKey();
    legacy
      .prepare('INSERT INTO api_keys (id, key_hash, label, owner, created_at) VALUES (?, ?, ?, ?, ?)')
      .run('key_legacy', hashApiKey(key), 'old bot', 'ops', new Date().toISOString());
    legacy.close();
    const store = await openStateStore({ DATA_DIR: dir });
    try {
      const principal = await store.keyByHash(hashApiKey(key));
      assert.equal(principal?.id, 'key_legacy');
      assert.deepEqual(principal?.scopes, FULL_SCOPES);
      assert.equal((await store.keyById('key_legacy'))?.owner, 'operator');
    } finally {
      await store.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('two gateways on one Postgres share accounts and keys: a key made on one works on the other', async () => {
  const env = { DATABASE_URL: postgres.url };
  const [one, two] = [await startTestGateway({ env }), await startTestGateway({ env })];
  try {
    const seed = await openStateStore({ DATA_DIR: one.dataDir, DATABASE_URL: postgres.url });
    const { hashPassword } = await import('../../gateway/accounts/passwords.ts');
    await seed.createAccount({
      email: 'shared@example.com',
      passwordHash: await hashPassword('shared password 1'),
      admin: false,
    });
    await seed.close();
    const browser = new ConsoleClient(one.url);
    assert.equal((await browser.signIn('shared@example.com', 'shared password 1')).status, 303);
    const page = await (
      await browser.post('/console/keys', {
        csrf: await browser.consoleCsrf(),
        label: 'shared',
        namespace: 'event',
        publishTopics: '*',
        consumeTopics: '*',
      })
    ).text();
    const key = /<output id="new-key">([^<]+)</.exec(page)?.[1] as string;
    const ping = await fetch(`${two.url}/event/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(ping.status, 200, 'the second host admits a key created through the first');
    // The SQLite file of either host never saw it.
    assert.equal(
      one.withStore((store) => store.list().some((k) => k.label === 'shared')),
      false,
    );
  } finally {
    await one.close();
    await two.close();
  }
});
