/**
 * Names a stranger chose, seen by an administrator in a real headless Chromium: a
 * self-registered account whose email is markup (it passes the address check: no space, one
 * "@") and its key's label. The admin's page must show both as text, with no element, attribute
 * or dialog of theirs, and the admin's own forms must keep working beside them.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { chromiumPath } from '../support/chromium.ts';
import { addAccount, ConsoleClient } from '../support/console-client.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

const PASSWORD = 'a password long enough';
// Breaks out of an attribute value and of text, with both quote kinds and a backtick.
const EMAIL = `"'><img/src=x/onerror=alert(1)><b>\`@evil.example`;
const LABEL = `</td></tr></table><form action=https://evil.example><input name=csrf value='x'><button>Revoke`;

let gw: TestGateway;
let browser: Browser;

before(async () => {
  gw = await startTestGateway({ env: { CONSOLE_SELF_REGISTRATION: 'true' } });
  await addAccount(gw, 'admin@example.com', PASSWORD, true);
  browser = await chromium.launch({
    executablePath: await chromiumPath(),
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  const stranger = new ConsoleClient(gw.url);
  const form = await (await stranger.get('/console/register')).text();
  const made = await stranger.post('/console/register', {
    csrf: ConsoleClient.csrfOf(form),
    email: EMAIL,
    password: PASSWORD,
  });
  assert.equal(made.status, 303, 'the markup email is an acceptable address');
  const created = await stranger.post('/console/keys', {
    csrf: await stranger.consoleCsrf(),
    label: LABEL,
    namespace: 'skills',
    publishTopics: '',
    consumeTopics: '',
  });
  assert.equal(created.status, 201);
});
after(async () => {
  await browser?.close();
  await gw?.close();
});

test("an admin's console shows a stranger's markup email and key label as text only", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const dialogs: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto(`${gw.url}/console/sign-in`);
  await page.getByLabel('Email', { exact: true }).fill('admin@example.com');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${gw.url}/console`);

  assert.equal(await page.locator('img, b, [onerror]').count(), 0, 'no element from the email');
  assert.equal(
    await page.locator('form[action^="https://evil.example"]').count(),
    0,
    'no form from the label',
  );
  const accountRow = page.locator('h2:text-is("Accounts") + table tr', { hasText: '@evil.example' });
  assert.equal(await accountRow.count(), 1);
  assert.equal(await accountRow.locator('td').first().textContent(), EMAIL, 'the email reads as typed');
  const keyRow = page.locator('tr', { hasText: 'evil.example><input' });
  assert.equal(await keyRow.count(), 1, 'the label stays inside one row');
  assert.equal(await keyRow.locator('td').first().textContent(), LABEL);
  assert.equal(await keyRow.locator('td').nth(2).textContent(), EMAIL, 'the owner column reads as typed');

  // The revoke button on that row is the gateway's, posting to the gateway.
  const revoke = keyRow.getByRole('button', { name: 'Revoke', exact: true });
  assert.equal(await revoke.count(), 1);
  assert.equal(
    await revoke.evaluate((button) => button.closest('form')?.getAttribute('action')),
    '/console/keys/revoke',
  );
  await revoke.click();
  await page.waitForURL(/done=revoked/);
  assert.deepEqual(dialogs, []);
  await context.close();
});
