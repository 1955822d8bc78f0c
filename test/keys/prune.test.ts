/**
 * `npm run keys -- prune` on both stores (SQLite in DATA_DIR; Postgres, a database on the native
 * test server, with DATABASE_URL): --dry-run only reports; prune deletes revoked and expired keys,
 * says which, and leaves live keys alone.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openStateStore } from '../../gateway/accounts/open.ts';
import { FULL_SCOPES } from '../../gateway/core/scopes.ts';
import { runCli } from '../support/cli.ts';
import { bothStateStores } from '../support/state-stores.ts';

const settings = bothStateStores('mcp-keys-prune-');

for (const [kind, env] of Object.entries(settings)) {
  describe(`npm run keys -- prune on ${kind}`, () => {
    test('reports, then removes, revoked and expired keys only', async () => {
      const keys = (args: string[]) => runCli('keys', args, { env: env() });
      const made = async (label: string) => {
        const result = await keys(['create', '--label', label, '--json']);
        assert.equal(result.code, 0, result.stderr);
        return JSON.parse(result.stdout).id as string;
      };
      const live = await made('live');
      const revoked = await made('gone');
      assert.equal((await keys(['revoke', revoked])).code, 0);
      // --expires takes today or later, so a key past its expiry is planted directly.
      const store = await openStateStore(env());
      const expired = await store.createKey({
        label: 'ended',
        ownerId: (await store.operatorAccount()).id,
        scopes: FULL_SCOPES,
        expiresAt: new Date(Date.now() - 60_000).toISOString(),
      });
      await store.close();

      const dry = await keys(['prune', '--dry-run', '--json']);
      assert.equal(dry.code, 0, dry.stderr);
      const reported = JSON.parse(dry.stdout) as { dryRun: boolean; removed: Array<{ id: string }> };
      assert.equal(reported.dryRun, true);
      assert.deepEqual(reported.removed.map((k) => k.id).sort(), [expired.id, revoked].sort());
      assert.equal(
        JSON.parse((await keys(['list', '--json'])).stdout).length,
        3,
        'a dry run removes nothing',
      );

      const pruned = await keys(['prune']);
      assert.equal(pruned.code, 0, pruned.stderr);
      assert.match(pruned.stdout, /^removed 2 keys:/);
      assert.match(pruned.stdout, new RegExp(`${revoked} +gone \\(owner operator\\), revoked `));
      assert.match(pruned.stdout, new RegExp(`${expired.id} +ended \\(owner operator\\), expired `));
      const left = JSON.parse((await keys(['list', '--json'])).stdout) as Array<{ id: string }>;
      assert.deepEqual(
        left.map((k) => k.id),
        [live],
      );
      assert.match((await keys(['prune'])).stdout, /nothing to prune/);
      assert.equal((await keys(['show', revoked])).code, 1, 'a pruned key is gone');
    });
  });
}
