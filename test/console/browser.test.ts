/**
 * The console in a real headless Chromium (Debian's package, driven by playwright-core):
 * sign in, create a scoped key, read it from the page, use it from the MCP SDK client, see
 * an out-of-scope call refused, revoke the key, see 401.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Browser, chromium } from 'playwright-core';
import { chromiumPath } from '../support/chromium.ts';
import { addAccount } from '../support/console-client.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

const root = join(import.meta.dirname, '../..');
const PASSWORD = 'a browser-typed password';
let gw: TestGateway;
let browser: Browser;

before(async () => {
  // A zero cache TTL makes revocation visible on the very next request.
  gw = await startTestGateway({ env: { API_KEY_CACHE_TTL_MS: '0' } });
  await addAccount(gw, 'grace@example.com', PASSWORD);
  browser = await chromium.launch({
    executablePath: await chromiumPath(),
    // Root in a CI container has no user namespace for Chromium's sandbox.
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
});
after(async () => {
  await browser?.close();
  await gw?.close();
});

async function mcpClient(key: string): Promise<Client> {
  const client = new Client({ name: 'console-browser-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}/event/mcp`), {
      requestInit: { headers: { 'X-API-Key': key } },
    }),
  );
  return client;
}

test('sign in, create a scoped key, use it, see a refusal, revoke it, see 401', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const dialogs: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });

  await page.goto(`${gw.url}/console`);
  assert.equal(new URL(page.url()).pathname, '/console/sign-in');
  await page.getByLabel('Email', { exact: true }).fill('grace@example.com');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${gw.url}/console`);
  assert.equal(await page.getByRole('button', { name: 'Sign out', exact: true }).count(), 1);

  // A label crafted as markup stays text in a real browser: no dialog, no element.
  await page.getByLabel('Label', { exact: true }).fill('orders bot <img src=x onerror=alert(1)>');
  await page.getByLabel('Publish topics', { exact: true }).fill('orders.*');
  await page.getByLabel('Consume topics', { exact: true }).fill('orders.*');
  await page.getByRole('button', { name: 'Create key', exact: true }).click();
  const keyElement = page.getByLabel('New API key', { exact: true });
  const key = (await keyElement.textContent())?.trim() ?? '';
  assert.match(key, /^mcp_[A-Za-z0-9_-]{32}$/);
  assert.equal(await page.locator('img[src="x"]').count(), 0);
  assert.deepEqual(dialogs, []);
  const config = JSON.parse((await page.locator('#client-config').textContent()) ?? '{}');
  assert.equal(config.mcpServers.event.headers['X-API-Key'], key);
  assert.equal(config.mcpServers.event.url, `${gw.url}/event/mcp`);

  const client = await mcpClient(key);
  try {
    const capabilities = await client.callTool({ name: 'event_capabilities', arguments: {} });
    assert.notEqual(capabilities.isError, true);
    const refused = await client.callTool({
      name: 'event_publish',
      arguments: { topic: 'payments', value: 'not for this key' },
    });
    assert.equal(refused.isError, true);
    const text = (refused.content as { type: string; text: string }[])[0]?.text ?? '';
    assert.match(text, /lacks the scope event:publish:payments/);
  } finally {
    await client.close();
  }

  // The listing after a reload names the key but never shows it.
  await page.goto(`${gw.url}/console`);
  assert.ok(!(await page.content()).includes(key));
  const shots = join(root, '.cache', 'screenshots');
  await mkdir(shots, { recursive: true });
  await page.screenshot({ path: join(shots, 'console.png'), fullPage: true });

  const row = page.locator('tr', { hasText: 'orders bot' });
  await row.getByRole('button', { name: 'Revoke', exact: true }).click();
  await page.waitForURL(/done=revoked/);
  assert.match((await row.textContent()) ?? '', /revoked/);
  await assert.rejects(mcpClient(key), /401|revoked/);
  const raw = await fetch(`${gw.url}/event/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  assert.equal(raw.status, 401);

  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.waitForURL(/\/console\/sign-in/);
  await page.goto(`${gw.url}/console`);
  assert.equal(new URL(page.url()).pathname, '/console/sign-in', 'signed out means signed out');
  await context.close();
});
