/**
 * Single sign-on end to end: a real OpenID Connect provider (oidc-provider) on a loopback
 * port, the gateway configured only through its OIDC_* settings, and a real Chromium
 * walking the provider's login and consent pages back into the console.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import Provider from 'oidc-provider';
import { type Browser, chromium } from 'playwright-core';
import { chromiumPath } from '../support/chromium.ts';
import { ConsoleClient } from '../support/console-client.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { freePort } from '../support/harness.ts';

let providerServer: Server;
let issuer: string;
let gw: TestGateway;
let browser: Browser;

before(async () => {
  const gatewayPort = await freePort();
  providerServer = createServer();
  await new Promise<void>((resolve) => providerServer.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(providerServer.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'gateway-console',
        client_secret: 'a-client-secret-for-tests',
        redirect_uris: [`http://127.0.0.1:${gatewayPort}/console/sso/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    cookies: { keys: ['cookie-signing-key-for-tests'] },
    // Whatever login is typed on the provider's development login page becomes the subject.
    async findAccount(_ctx: unknown, id: string) {
      return {
        accountId: id,
        async claims() {
          return { sub: id, email: `${id}@example.com`, email_verified: true };
        },
      };
    },
  });
  providerServer.on('request', provider.callback());
  gw = await startTestGateway({
    env: {
      PORT: String(gatewayPort),
      OIDC_ISSUER: issuer,
      OIDC_CLIENT_ID: 'gateway-console',
      OIDC_CLIENT_SECRET: 'a-client-secret-for-tests',
      OIDC_NAME: 'Test IdP',
    },
  });
  browser = await chromium.launch({
    executablePath: await chromiumPath(),
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
});

after(async () => {
  await browser?.close();
  await gw?.close();
  providerServer?.closeAllConnections();
  await new Promise((resolve) => providerServer?.close(resolve));
});

test('signing in through the OpenID Connect provider lands in the console with a new account', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${gw.url}/console/sign-in`);
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
  await page.waitForURL((url) => url.href.startsWith(issuer));
  await page.locator('input[name="login"]').fill('hopper');
  await page.locator('input[name="password"]').fill('anything');
  await page.locator('button[type="submit"]').click();
  // The provider's consent page, then back to the gateway.
  await page.locator('button[type="submit"]').click();
  await page.waitForURL(`${gw.url}/console`);
  assert.match(await page.content(), /hopper@example.com/);
  assert.equal(await page.getByRole('button', { name: 'Create key', exact: true }).count(), 1);
  const account = await gw.withStore((store) => store.accountByEmail('hopper@example.com'));
  assert.equal(account?.oidcSubject, `${issuer}|hopper`);
  assert.equal(account?.hasPassword, false, 'an SSO account has no password to guess');
  await context.close();
});

test('a callback that did not start here, or with a forged state, is refused', async () => {
  const client = new ConsoleClient(gw.url);
  const stray = await client.get('/console/sso/callback?code=abc&state=xyz');
  assert.equal(stray.status, 400);
  assert.match(await stray.text(), /did not start here/);
  const started = await client.get('/console/sso/start');
  assert.equal(started.status, 303);
  assert.ok(started.headers.get('location')?.startsWith(issuer));
  const forged = await client.get('/console/sso/callback?code=abc&state=forged');
  assert.equal(forged.status, 400);
  assert.ok(!client.cookies.has('mcp_console'), 'no session from a refused callback');
});
