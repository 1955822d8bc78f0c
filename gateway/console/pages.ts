/** The console's pages. Every value is interpolated through html``, which escapes it. */
import type { Account, ApiKeyRecord, CreatedApiKey } from '../accounts/model.ts';
import { describeQuotas, describeRate, type KeyLimits } from '../core/key-limits.ts';
import { describeScopes } from '../core/scopes.ts';
import { type Html, html, notice } from './html.ts';

export interface SignInView {
  csrf: string;
  error?: string;
  info?: string;
  email?: string;
  selfRegistration: boolean;
  sso?: string | undefined;
}

export function signInBody({ csrf, error, info, email, selfRegistration, sso }: SignInView): Html {
  return html`<h1>Sign in</h1>${notice('error', error)}${notice('info', info)}
<form method="post" action="/console/sign-in">
  <input type="hidden" name="csrf" value="${csrf}">
  <label for="email">Email</label><input type="email" id="email" name="email" autocomplete="username" required value="${email ?? ''}">
  <label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
  <p><button type="submit">Sign in</button></p>
</form>
${sso ? html`<p><a href="/console/sso/start">Sign in with ${sso}</a></p>` : ''}
${selfRegistration ? html`<p>No account yet? <a href="/console/register">Create an account</a>.</p>` : ''}`;
}

export function registerBody({ csrf, error, email }: { csrf: string; error?: string; email?: string }): Html {
  return html`<h1>Create an account</h1>${notice('error', error)}
<form method="post" action="/console/register">
  <input type="hidden" name="csrf" value="${csrf}">
  <label for="email">Email</label><input type="email" id="email" name="email" autocomplete="username" required value="${email ?? ''}">
  <label for="password">Password</label><input type="password" id="password" name="password" autocomplete="new-password" required>
  <p><button type="submit">Create account</button></p>
</form><p><a href="/console/sign-in">Back to sign in</a></p>`;
}

function dateOnly(iso: string | null): string {
  return iso ? iso.slice(0, 16).replace('T', ' ') : '—';
}

/** The key's own limits; a key without a rate of its own follows RATE_LIMIT_DEFAULT, whatever that is now. */
function limitsText(limits: KeyLimits): string {
  const rate = limits.rate || limits.unlimited ? describeRate(limits) : 'gateway default';
  const parts = [`rate ${rate}`];
  if (limits.quotas) parts.push(`quotas ${describeQuotas(limits)}`);
  if (limits.maxPolls !== undefined) parts.push(`max polls ${limits.maxPolls}`);
  return parts.join('; ');
}

function keyRows(keys: ApiKeyRecord[], csrf: string, showOwner: boolean): Html {
  if (keys.length === 0) return html`<p class="muted">No keys yet.</p>`;
  const rows = keys.map((key) => {
    const expired = key.expiresAt !== null && Date.parse(key.expiresAt) <= Date.now();
    const status = key.revokedAt ? `revoked ${dateOnly(key.revokedAt)}` : expired ? 'expired' : 'active';
    return html`<tr class="${key.revokedAt ? 'revoked' : ''}" data-key-id="${key.id}">
  <td>${key.label}</td><td><code>${key.id}</code></td>${showOwner ? html`<td>${key.owner}</td>` : ''}
  <td>${dateOnly(key.createdAt)}</td><td>${dateOnly(key.lastUsedAt)}</td>
  <td>${describeScopes(key.scopes)}</td><td class="limits">${limitsText(key.limits)}</td><td>${dateOnly(key.expiresAt)}</td><td>${status}</td>
  <td>${
    key.revokedAt
      ? ''
      : html`<form method="post" action="/console/keys/revoke" class="inline">
      <input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="id" value="${key.id}">
      <button type="submit">Revoke</button></form>`
  }</td></tr>`;
  });
  return html`<table><thead><tr><th>Label</th><th>ID</th>${showOwner ? html`<th>Owner</th>` : ''}<th>Created</th><th>Last used</th><th>Scopes</th><th>Limits</th><th>Expires</th><th>Status</th><th></th></tr></thead>
<tbody>${rows}</tbody></table>`;
}

function createKeyForm(csrf: string, namespaces: string[]): Html {
  const boxes = namespaces.map(
    (name) =>
      html`<label class="check"><input type="checkbox" name="namespace" value="${name}" checked> ${name}</label>`,
  );
  return html`<form method="post" action="/console/keys">
<input type="hidden" name="csrf" value="${csrf}">
<fieldset><legend>New key</legend>
  <label for="label">Label</label><input type="text" id="label" name="label" required maxlength="100" placeholder="e.g. nightly summariser">
  <fieldset><legend>Namespaces</legend>${boxes}</fieldset>
  <label class="check"><input type="checkbox" id="read-only" name="readOnly" value="on"> Read-only (only tools marked read-only)</label>
  <label for="publish-topics">Publish topics</label><input type="text" id="publish-topics" name="publishTopics" value="*" aria-describedby="topics-help">
  <label for="consume-topics">Consume topics</label><input type="text" id="consume-topics" name="consumeTopics" value="*" aria-describedby="topics-help">
  <p id="topics-help" class="muted">Event topics, separated by commas; * matches anything (orders.* matches orders.eu). Leave empty to allow none.</p>
  <label for="expires">Expires (optional, end of that day UTC)</label><input type="date" id="expires" name="expires">
  <p><button type="submit">Create key</button></p>
</fieldset></form>`;
}

function accountsSection(accounts: Account[], csrf: string, self: string): Html {
  const rows = accounts.map(
    (account) => html`<tr><td>${account.email}</td><td>${account.admin ? 'admin' : 'user'}</td>
<td>${account.disabledAt ? 'disabled' : account.hasPassword || account.oidcSubject ? 'active' : 'keys only'}</td><td>${dateOnly(account.createdAt)}</td>
<td>${
      account.id === self
        ? ''
        : html`<form method="post" action="/console/accounts/${account.disabledAt ? 'enable' : 'disable'}" class="inline">
<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="id" value="${account.id}">
<button type="submit">${account.disabledAt ? 'Enable' : 'Disable'}</button></form>`
    }</td></tr>`,
  );
  return html`<h2>Accounts</h2>
<table><thead><tr><th>Email</th><th>Role</th><th>Status</th><th>Created</th><th></th></tr></thead><tbody>${rows}</tbody></table>
<form method="post" action="/console/accounts">
<input type="hidden" name="csrf" value="${csrf}">
<fieldset><legend>Add an account</legend>
<label for="new-email">New account email</label><input type="email" id="new-email" name="email" required>
<label for="new-password">New account password</label><input type="password" id="new-password" name="password" autocomplete="new-password" required>
<label class="check"><input type="checkbox" name="admin" value="on"> Administrator</label>
<p><button type="submit">Add account</button></p></fieldset></form>`;
}

export interface ConsoleView {
  account: Account;
  csrf: string;
  namespaces: string[];
  ownKeys: ApiKeyRecord[];
  allKeys?: ApiKeyRecord[];
  accounts?: Account[];
  error?: string;
  info?: string;
  created?: { key: CreatedApiKey; clientConfig: unknown };
}

export function consoleBody(view: ConsoleView): Html {
  const created = view.created
    ? html`<section class="created" aria-labelledby="created-title">
<h2 id="created-title">Key created: ${view.created.key.label}</h2>
<p>Copy it now. It is shown only this once; the gateway keeps only its hash.</p>
<label for="new-key">New API key</label>
<output id="new-key">${view.created.key.key}</output> <button type="button" data-copy="new-key">Copy key</button>
<p>Client configuration (<code>mcpServers</code>) for the namespaces this key may use:</p>
<pre id="client-config">${JSON.stringify(view.created.clientConfig, null, 2)}</pre>
<button type="button" data-copy="client-config">Copy configuration</button></section>`
    : '';
  return html`<h1>API keys</h1>${notice('error', view.error)}${notice('info', view.info)}${created}
${createKeyForm(view.csrf, view.namespaces)}
<h2>Your keys</h2>${keyRows(view.ownKeys, view.csrf, false)}
${view.allKeys ? html`<h2>All keys</h2>${keyRows(view.allKeys, view.csrf, true)}` : ''}
${view.accounts ? accountsSection(view.accounts, view.csrf, view.account.id) : ''}`;
}
