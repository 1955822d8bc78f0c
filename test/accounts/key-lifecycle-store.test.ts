/**
 * The store calls behind `npm run keys -- rotate|prune` and `npm run users -- promote|demote`,
 * on both adapters: SQLite in a temp dir, Postgres a database on the native test server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { StateStore } from '../../gateway/accounts/model.ts';
import { openStateStore } from '../../gateway/accounts/open.ts';
import { ApiKeyAuthenticator } from '../../gateway/auth/api-key-auth.ts';
import { hashApiKey } from '../../gateway/core/api-key.ts';
import { FULL_SCOPES } from '../../gateway/core/scopes.ts';
import { elapse } from '../support/harness.ts';
import { bothStateStores } from '../support/state-stores.ts';

const stores = bothStateStores('mcp-key-lifecycle-');
const adapters = {
  sqlite: () => openStateStore(stores.sqlite()),
  postgres: () => openStateStore(stores.postgres()),
};

const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

for (const [kind, open] of Object.entries(adapters)) {
  describe(`key lifecycle: ${kind}`, () => {
    let store: StateStore;
    let ownerId: string;
    before(async () => {
      store = await open();
      ownerId = (await store.operatorAccount()).id;
    });
    after(() => store.close());

    const newKey = (label: string, expiresAt: string | null = null) =>
      store.createKey({ label, ownerId, scopes: FULL_SCOPES, expiresAt });

    test('rotate: same id, new secret; the old one is admitted until its grace ends, then refused as rotated', async () => {
      const created = await newKey(`rot-${kind}`);
      // Long enough that a loaded machine still checks the old secret inside its grace.
      const graceUntil = inMs(1500);
      const rotated = await store.rotateKey(created.id, graceUntil);
      assert.ok(rotated);
      assert.equal(rotated.id, created.id);
      assert.notEqual(rotated.key, created.key);
      assert.equal((await store.keyByHash(hashApiKey(rotated.key)))?.graceUntil, undefined);
      const old = await store.keyByHash(hashApiKey(created.key));
      assert.equal(old?.id, created.id);
      assert.equal(old?.graceUntil, graceUntil);

      const auth = new ApiKeyAuthenticator(store, { positiveTtlMs: 60_000, negativeMaxEntries: 10 });
      assert.equal((await auth.authenticate(created.key)).ok, true);
      assert.equal((await auth.authenticate(rotated.key)).ok, true);
      // Elapsed time is the point: the grace must end.
      await elapse(Date.parse(graceUntil) - Date.now() + 50);
      // Cached or not, the grace end is known exactly.
      assert.deepEqual(await auth.authenticate(created.key), { ok: false, reason: 'rotated' });
      assert.equal((await auth.authenticate(rotated.key)).ok, true);

      const twice = await store.rotateKey(created.id, null);
      assert.ok(twice);
      assert.equal(await store.keyByHash(hashApiKey(rotated.key)), undefined, 'no grace: gone at once');
      assert.equal((await store.keyByHash(hashApiKey(twice.key)))?.id, created.id);
    });

    test('rotate: an unknown or revoked key changes nothing; revoking also stops a secret in grace', async () => {
      assert.equal(await store.rotateKey('key_nothere', inMs(60_000)), undefined);
      const created = await newKey(`rev-${kind}`);
      const rotated = await store.rotateKey(created.id, inMs(60_000));
      assert.ok(rotated);
      await store.revokeKey(created.id);
      assert.equal((await store.keyByHash(hashApiKey(created.key)))?.revoked, true);
      assert.equal(await store.rotateKey(created.id, null), undefined);
      assert.equal((await store.keyByHash(hashApiKey(rotated.key)))?.revoked, true, 'the secret stayed');
    });

    test('prune: deletes revoked and expired keys with their counts and old secrets, keeps the rest', async () => {
      for (const record of await store.listKeys()) await store.revokeKey(record.id);
      await store.pruneKeys(new Date());
      const live = await newKey(`live-${kind}`, inMs(86_400_000));
      const revoked = await newKey(`revoked-${kind}`);
      await store.revokeKey(revoked.id);
      const expired = await newKey(`expired-${kind}`, inMs(-1000));
      await store.takeQuota(expired.id, '2026-01-01', 'gsc', 10);
      const graced = await store.rotateKey(live.id, inMs(-1));
      assert.ok(graced);

      const pruned = await store.pruneKeys(new Date());
      assert.deepEqual(pruned.map((k) => k.id).sort(), [expired.id, revoked.id].sort());
      assert.equal(pruned.find((k) => k.id === expired.id)?.label, `expired-${kind}`);
      assert.deepEqual(
        (await store.listKeys()).map((k) => k.id),
        [live.id],
      );
      assert.equal(await store.keyByHash(hashApiKey(revoked.key)), undefined);
      assert.deepEqual(await store.quotaUsage(expired.id, '2026-01-01'), {});
      assert.equal(await store.keyByHash(hashApiKey(live.key)), undefined, 'an ended grace secret is gone');
      assert.equal((await store.keyByHash(hashApiKey(graced.key)))?.id, live.id);
      assert.deepEqual(await store.pruneKeys(new Date()), [], 'pruning again finds nothing');
    });

    test('promote and demote set the admin flag; an unknown account is reported', async () => {
      const account = await store.createAccount({
        email: `adm-${kind}@example.com`,
        passwordHash: 'h',
        admin: false,
      });
      assert.equal(await store.setAccountAdmin(account.id, true), true);
      assert.equal((await store.accountById(account.id))?.admin, true);
      assert.equal(await store.setAccountAdmin(account.id, false), true);
      assert.equal((await store.accountById(account.id))?.admin, false);
      assert.equal(await store.setAccountAdmin('acct_none', true), false);
    });
  });
}
