import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { addAccount, ConsoleClient } from '../support/console-client.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

const PASSWORD = 'correct horse battery';

describe('console sign-in, sessions and key pages', () => {
  let gw: TestGateway;
  const logLines: string[] = [];
  before(async () => {
    gw = await startTestGateway({
      env: { SIGNIN_MAX_FAILURES: '3', SIGNIN_ATTEMPTS_PER_MINUTE: '100', LOG_LEVEL: 'debug' },
      logDestination: new Writable({
        write(chunk, _encoding, done) {
          logLines.push(String(chunk));
          done();
        },
      }),
    });
    await addAccount(gw, 'ada@example.com', PASSWORD, true);
    await addAccount(gw, 'bob@example.com', PASSWORD);
    await addAccount(gw, 'locked@example.com', PASSWORD);
  });
  after(() => gw.close());

  test('the sign-in page has labelled fields and the security headers', async () => {
    const response = await new ConsoleClient(gw.url).get('/console/sign-in');
    const page = await response.text();
    assert.equal(response.status, 200);
    assert.match(page, /<label for="email">Email<\/label><input type="email" id="email"/);
    assert.match(page, /<label for="password">Password<\/label><input type="password" id="password"/);
    assert.match(page, /<button type="submit">Sign in<\/button>/);
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /script-src 'self'/);
    assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(response.headers.get('x-frame-options'), 'DENY');
    const unsigned = await new ConsoleClient(gw.url).get('/console');
    assert.equal(unsigned.status, 303);
    assert.equal(unsigned.headers.get('location'), '/console/sign-in');
    assert.equal(unsigned.statusText, 'See Other', 'a full status line on either engine');
  });

  test('sign-in sets an HttpOnly SameSite session cookie; sign-out ends the session', async () => {
    const client = new ConsoleClient(gw.url);
    const response = await client.signIn('Ada@Example.com ', PASSWORD);
    assert.equal(response.status, 303);
    const cookie = response.headers.getSetCookie().find((line) => line.startsWith('mcp_console='));
    assert.ok(cookie);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    assert.doesNotMatch(cookie, /Secure/, 'plain HTTP: a Secure cookie would never come back');
    const page = await (await client.get('/console')).text();
    assert.match(page, /ada@example.com/);
    assert.match(page, /<button type="submit">Sign out<\/button>/);
    const token = client.cookies.get('mcp_console');
    const out = await client.post('/console/sign-out', { csrf: ConsoleClient.csrfOf(page) });
    assert.equal(out.headers.get('location'), '/console/sign-in?done=signed-out');
    const replay = await fetch(`${gw.url}/console`, {
      redirect: 'manual',
      headers: { cookie: `mcp_console=${token}` },
    });
    assert.equal(replay.status, 303, 'the old session token no longer works');
  });

  test('a wrong password is refused without saying which part was wrong', async () => {
    const client = new ConsoleClient(gw.url);
    for (const [email, password] of [
      ['bob@example.com', 'wrong password!'],
      ['nobody@example.com', PASSWORD],
    ] as const) {
      const response = await client.signIn(email, password);
      assert.equal(response.status, 401);
      assert.match(await response.text(), /Wrong email or password/);
    }
    assert.ok(!client.cookies.has('mcp_console'));
  });

  test('CSRF: a form without the right token, or from another site, changes nothing', async () => {
    const client = new ConsoleClient(gw.url);
    const signInWithoutToken = await client.post('/console/sign-in', {
      email: 'bob@example.com',
      password: PASSWORD,
    });
    assert.equal(signInWithoutToken.status, 403, 'login CSRF: the sign-in form needs its token too');
    assert.ok(!client.cookies.has('mcp_console'));
    await client.signIn('bob@example.com', PASSWORD);
    const csrf = await client.consoleCsrf();
    const form = { label: 'forged', namespace: 'event', publishTopics: '*', consumeTopics: '*' };
    const noToken = await client.post('/console/keys', form);
    assert.equal(noToken.status, 403);
    const wrongToken = await client.post('/console/keys', { ...form, csrf: `${csrf.slice(0, -2)}xx` });
    assert.equal(wrongToken.status, 403);
    const crossSite = await client.post(
      '/console/keys',
      { ...form, csrf },
      { origin: 'https://evil.example' },
    );
    assert.equal(crossSite.status, 403);
    const fetchMeta = await client.post(
      '/console/keys',
      { ...form, csrf },
      { 'sec-fetch-site': 'cross-site' },
    );
    assert.equal(fetchMeta.status, 403);
    const page = await (await client.get('/console')).text();
    assert.doesNotMatch(page, /forged/, 'no refused form created a key');
  });

  test('session fixation: a planted cookie is never adopted, and sign-in replaces any old session', async () => {
    const planted = 'A'.repeat(43);
    const client = new ConsoleClient(gw.url);
    client.cookies.set('mcp_console', planted);
    await client.signIn('bob@example.com', PASSWORD);
    const issued = client.cookies.get('mcp_console');
    assert.ok(issued && issued !== planted);
    const withPlanted = await fetch(`${gw.url}/console`, {
      redirect: 'manual',
      headers: { cookie: `mcp_console=${planted}` },
    });
    assert.equal(withPlanted.status, 303);
    // Signing in again while signed in rotates the token: the earlier one stops working.
    const csrf = client.cookies.get('mcp_console_pre') as string;
    await client.post('/console/sign-in', { csrf, email: 'bob@example.com', password: PASSWORD });
    const rotated = client.cookies.get('mcp_console');
    assert.notEqual(rotated, issued);
    const old = await fetch(`${gw.url}/console`, {
      redirect: 'manual',
      headers: { cookie: `mcp_console=${issued}` },
    });
    assert.equal(old.status, 303);
  });

  test('brute force: consecutive failures lock the account, even against the right password', async () => {
    const client = new ConsoleClient(gw.url);
    for (let i = 0; i < 3; i++)
      assert.equal((await client.signIn('locked@example.com', `guess number ${i}`)).status, 401);
    const right = await client.signIn('locked@example.com', PASSWORD);
    assert.equal(right.status, 429);
    assert.match(await right.text(), /locked/);
    assert.ok(Number(right.headers.get('retry-after')) > 0);
    assert.ok(!client.cookies.has('mcp_console'));
  });

  test('creating a key shows it once with its client configuration; listings, later pages and logs never do', async () => {
    const client = new ConsoleClient(gw.url);
    await client.signIn('bob@example.com', PASSWORD);
    const response = await client.post('/console/keys', {
      csrf: await client.consoleCsrf(),
      label: 'summariser',
      namespace: 'event',
      readOnly: 'on',
      publishTopics: '',
      consumeTopics: 'orders.*',
    });
    assert.equal(response.status, 201);
    const page = await response.text();
    const key = /<output id="new-key">(mcp_[A-Za-z0-9_-]+)<\/output>/.exec(page)?.[1];
    assert.ok(key, 'the key is the text of the element labelled New API key');
    assert.match(page, /<label for="new-key">New API key<\/label>/);
    assert.match(page, new RegExp(`&quot;X-API-Key&quot;: &quot;${key}&quot;`));
    assert.match(page, /\/event\/mcp/);
    assert.match(page, /read-only/);
    const later = await (await client.get('/console')).text();
    assert.match(later, /summariser/);
    assert.ok(!later.includes(key), 'the key is never shown again');
    assert.ok(!logLines.join('').includes(key), 'the key never reaches the log');
    assert.ok(!logLines.join('').includes(PASSWORD), 'no password reaches the log');
    const mcp = await fetch(`${gw.url}/event/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': key,
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(mcp.status, 200, 'the new key works on the MCP route');
  });

  test('labels are rendered inert, in the created view and in listings', async () => {
    const client = new ConsoleClient(gw.url);
    await client.signIn('bob@example.com', PASSWORD);
    const label = '<script>alert(1)</script><img src=x onerror=alert(2)>"\'';
    const created = await client.post('/console/keys', {
      csrf: await client.consoleCsrf(),
      label,
      namespace: 'event',
      publishTopics: '*',
      consumeTopics: '*',
    });
    for (const page of [await created.text(), await (await client.get('/console')).text()]) {
      assert.ok(!page.includes('<script>alert'), 'no script element from a label');
      assert.ok(!page.includes('<img src=x'), 'no image element from a label');
      assert.match(
        page,
        /&lt;script&gt;alert\(1\)&lt;\/script&gt;&lt;img src=x onerror=alert\(2\)&gt;&quot;&#39;/,
      );
    }
  });

  test('session cookies are never accepted on MCP routes', async () => {
    const client = new ConsoleClient(gw.url);
    await client.signIn('ada@example.com', PASSWORD);
    const response = await fetch(`${gw.url}/event/mcp`, {
      method: 'POST',
      headers: {
        cookie: client.cookieHeader(),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(response.status, 401);
    assert.match(await response.text(), /X-API-Key/);
  });

  test("users revoke only their own keys; an admin sees and revokes everyone's and disables accounts", async () => {
    const bob = new ConsoleClient(gw.url);
    await bob.signIn('bob@example.com', PASSWORD);
    const bobPage = await (
      await bob.post('/console/keys', {
        csrf: await bob.consoleCsrf(),
        label: 'bob-key',
        namespace: 'event',
        publishTopics: '*',
        consumeTopics: '*',
      })
    ).text();
    const bobKey = /<output id="new-key">([^<]+)</.exec(bobPage)?.[1] as string;
    const bobKeyId = gw.withStore((store) => store.list().find((k) => k.label === 'bob-key')?.id) as string;
    const ada = new ConsoleClient(gw.url);
    await ada.signIn('ada@example.com', PASSWORD);
    const adaPage = await (await ada.get('/console')).text();
    assert.match(adaPage, /All keys/);
    assert.match(adaPage, /bob-key/);
    assert.match(adaPage, /Accounts/);
    // Bob cannot revoke the suite's own key; it belongs to another account.
    const notHis = await bob.post('/console/keys/revoke', { csrf: await bob.consoleCsrf(), id: gw.apiKeyId });
    assert.equal(notHis.headers.get('location'), '/console?done=not-revoked');
    assert.equal(
      gw.withStore((store) => store.list().find((k) => k.id === gw.apiKeyId)?.revokedAt),
      null,
    );
    const revoked = await ada.post('/console/keys/revoke', {
      csrf: ConsoleClient.csrfOf(adaPage),
      id: bobKeyId,
    });
    assert.equal(revoked.headers.get('location'), '/console?done=revoked');
    assert.ok(gw.withStore((store) => store.list().find((k) => k.id === bobKeyId)?.revokedAt));
    const ping = () =>
      fetch(`${gw.url}/event/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': bobKey },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
    assert.equal((await ping()).status, 401);
    // Disabling an account ends its sessions.
    const bobId = gw.withStore((store) => store.list().find((k) => k.id === bobKeyId)?.ownerId) as string;
    await ada.post('/console/accounts/disable', { csrf: ConsoleClient.csrfOf(adaPage), id: bobId });
    assert.equal((await bob.get('/console')).status, 303);
    assert.equal((await bob.signIn('bob@example.com', PASSWORD)).status, 401);
    await ada.post('/console/accounts/enable', { csrf: ConsoleClient.csrfOf(adaPage), id: bobId });
    assert.equal((await bob.signIn('bob@example.com', PASSWORD)).status, 303);
  });

  test('a non-admin cannot manage accounts', async () => {
    const bob = new ConsoleClient(gw.url);
    await bob.signIn('bob@example.com', PASSWORD);
    const response = await bob.post('/console/accounts', {
      csrf: await bob.consoleCsrf(),
      email: 'mallory@example.com',
      password: 'a long enough password',
      admin: 'on',
    });
    assert.equal(response.status, 403);
    assert.equal(await gw.withStore((store) => store.accountByEmail('mallory@example.com')), undefined);
  });
});

test('sign-in attempts per client address are limited before any password is checked', async () => {
  const gw = await startTestGateway({ env: { SIGNIN_ATTEMPTS_PER_MINUTE: '4' } });
  try {
    await addAccount(gw, 'eve@example.com', PASSWORD);
    const client = new ConsoleClient(gw.url);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await client.signIn(`user${i}@example.com`, 'whatever it is')).status);
    assert.deepEqual(statuses, [401, 401, 401, 401, 429]);
    const right = await client.signIn('eve@example.com', PASSWORD);
    assert.equal(right.status, 429, 'even the right password waits out the window');
    assert.match(await right.text(), /Too many sign-in attempts/);
  } finally {
    await gw.close();
  }
});

test('self-registration exists only when the operator enables it, and makes plain accounts', async () => {
  const off = await startTestGateway();
  try {
    assert.equal((await new ConsoleClient(off.url).get('/console/register')).status, 404);
  } finally {
    await off.close();
  }
  const gw = await startTestGateway({ env: { CONSOLE_SELF_REGISTRATION: 'true' } });
  try {
    const client = new ConsoleClient(gw.url);
    const form = await (await client.get('/console/register')).text();
    assert.match(form, /<button type="submit">Create account<\/button>/);
    const csrf = ConsoleClient.csrfOf(form);
    const weak = await client.post('/console/register', {
      csrf,
      email: 'new@example.com',
      password: 'short',
    });
    assert.equal(weak.status, 400);
    assert.match(await weak.text(), /at least 10 characters/);
    const made = await client.post('/console/register', {
      csrf,
      email: 'new@example.com',
      password: PASSWORD,
      admin: 'on',
    });
    assert.equal(made.status, 303);
    const page = await (await client.get('/console')).text();
    assert.match(page, /new@example.com/);
    assert.doesNotMatch(page, /Accounts/, 'a registered account is never an admin');
    const again = await new ConsoleClient(gw.url).post('/console/register', {
      csrf: 'x',
      email: 'other@example.com',
      password: PASSWORD,
    });
    assert.equal(again.status, 403, 'registration needs the form token too');
  } finally {
    await gw.close();
  }
});
