/**
 * `npm run users` end to end on both stores: the CLI process changes the store the gateway
 * reads (SQLite in DATA_DIR, or Postgres, a database on the native test server, with DATABASE_URL), and
 * the sign-in service sees the result.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { StateStore } from '../../gateway/accounts/model.ts';
import { openStateStore } from '../../gateway/accounts/open.ts';
import { SignInService } from '../../gateway/accounts/sign-in.ts';
import { hashApiKey } from '../../gateway/core/api-key.ts';
import { runCli } from '../support/cli.ts';
import { bothStateStores } from '../support/state-stores.ts';

const settings = bothStateStores('mcp-users-commands-');

const POLICY = { maxFailures: 2, lockoutMs: 60_000, attemptsPerWindow: 1000, windowMs: 60_000 };

for (const [kind, env] of Object.entries(settings)) {
  describe(`npm run users on ${kind}`, () => {
    let store: StateStore;
    const email = `ops-${kind}@example.com`;
    const users = (args: string[], stdin?: string) =>
      runCli('users', args, { env: env(), ...(stdin === undefined ? {} : { stdin }) });
    before(async () => {
      store = await openStateStore(env());
    });
    after(() => store.close());

    test('create, then unlock a locked-out account: it signs in again', async () => {
      const created = await users(['create', '--email', email], 'first long password\n');
      assert.equal(created.code, 0, created.stderr);
      const signIn = new SignInService(store, POLICY);
      for (let i = 0; i < 2; i++) assert.equal((await signIn.signIn(email, 'wrong password', 'a')).ok, false);
      assert.deepEqual(
        { ...(await signIn.signIn(email, 'first long password', 'a')), retryAfterSeconds: 0 },
        { ok: false, reason: 'locked', retryAfterSeconds: 0 },
      );
      const listed = JSON.parse((await users(['list', '--json'])).stdout) as Array<{
        email: string;
        lockedUntil: string | null;
      }>;
      assert.ok(listed.find((a) => a.email === email)?.lockedUntil, 'list shows the lockout');

      const unlocked = await users(['unlock', '--email', email]);
      assert.equal(unlocked.code, 0, unlocked.stderr);
      assert.match(unlocked.stdout, /unlocked .*: its 2 failed sign-ins are forgotten/);
      assert.equal((await signIn.signIn(email, 'first long password', 'a')).ok, true);
      assert.match((await users(['unlock', '--email', email])).stdout, /was not locked; nothing changed/);
    });

    test('reset-password reads stdin only, replaces the password and ends the sessions', async () => {
      const account = await store.accountByEmail(email);
      assert.ok(account);
      const session = hashApiKey(`session-${kind}`);
      const now = Date.now();
      await store.createSession(session, {
        accountId: account.id,
        csrfToken: 'c',
        createdAt: new Date(now).toISOString(),
        expiresAt: new Date(now + 60_000).toISOString(),
      });
      const asArgument = await users([
        'reset-password',
        '--email',
        email,
        '--password',
        'second long password',
      ]);
      assert.equal(asArgument.code, 2);
      assert.match(asArgument.stderr, /never taken as arguments/);
      assert.match(asArgument.stderr, /Usage: npm run users -- reset-password/);
      const short = await users(['reset-password', '--email', email], 'short\n');
      assert.equal(short.code, 1);
      assert.match(short.stderr, /at least 10 characters\. Nothing was changed\./);

      const reset = await users(['reset-password', '--email', email], 'second long password\n');
      assert.equal(reset.code, 0, reset.stderr);
      assert.ok(!reset.stdout.includes('second long password'));
      assert.equal(await store.sessionByHash(session), undefined, 'its sessions ended');
      const signIn = new SignInService(store, POLICY);
      assert.equal((await signIn.signIn(email, 'first long password', 'b')).ok, false);
      assert.equal((await signIn.signIn(email, 'second long password', 'b')).ok, true);
    });

    test('promote and demote; disable and enable; an unknown account fails with exit 1', async () => {
      const promoted = await users(['promote', '--email', email.toUpperCase()]);
      assert.equal(promoted.code, 0, promoted.stderr);
      assert.equal((await store.accountByEmail(email))?.admin, true);
      assert.match((await users(['promote', '--email', email])).stdout, /already an administrator/);
      const demoted = await users(['demote', '--email', email]);
      assert.equal(demoted.code, 0, demoted.stderr);
      assert.equal((await store.accountByEmail(email))?.admin, false);

      assert.equal((await users(['disable', '--email', email])).code, 0);
      assert.ok((await store.accountByEmail(email))?.disabledAt);
      assert.equal((await users(['enable', '--email', email])).code, 0);
      assert.equal((await store.accountByEmail(email))?.disabledAt, null);

      for (const command of ['promote', 'demote', 'unlock', 'disable', 'enable', 'reset-password']) {
        const missing = await users(
          [command, '--email', `nobody-${kind}@example.com`],
          'a long enough password',
        );
        assert.equal(missing.code, 1, `${command}: ${missing.stderr}`);
        assert.match(missing.stderr, /no account with email nobody-.*; nothing was changed/);
      }
      const malformed = await users(['promote', '--email', 'not-an-email']);
      assert.equal(malformed.code, 2);
      assert.match(malformed.stderr, /--email takes an email address/);
    });
  });
}
