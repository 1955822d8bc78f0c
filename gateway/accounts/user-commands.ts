/** What each `npm run users` command does to the state store. */
import { CliFailure, printList } from '../cli/program.ts';
import { type AccountSecrets, normalizeEmail, OPERATOR_EMAIL, type StateStore } from './model.ts';
import { hashPassword, passwordProblem } from './passwords.ts';
import { publicAccount } from './rows.ts';

const KEY_CACHE_NOTE = 'its keys stop working within API_KEY_CACHE_TTL_MS (default 5 s)';

async function accountNamed(store: StateStore, email: string): Promise<AccountSecrets> {
  const account = await store.accountByEmail(email);
  if (!account) {
    throw new CliFailure(
      `no account with email ${normalizeEmail(email)}; nothing was changed (see \`npm run users -- list\`)`,
    );
  }
  return account;
}

function isLocked(account: AccountSecrets, now = Date.now()): boolean {
  return account.lockedUntil !== null && Date.parse(account.lockedUntil) > now;
}

export async function createUser(
  store: StateStore,
  email: string,
  askPassword: () => Promise<string>,
  options: { admin?: boolean; json?: boolean },
) {
  // Before the password is asked for, so nobody types one for nothing.
  if (await store.accountByEmail(email)) {
    throw new CliFailure(
      `an account with email ${normalizeEmail(email)} already exists; to give it a new password run \`npm run users -- reset-password --email ${normalizeEmail(email)}\``,
    );
  }
  const password = await askPassword();
  const problem = passwordProblem(password);
  if (problem) throw new CliFailure(`${problem} Nothing was created.`);
  const account = await store.createAccount({
    email,
    passwordHash: await hashPassword(password),
    admin: options.admin ?? false,
  });
  if (options.json) console.log(JSON.stringify(account));
  else console.log(`created ${account.admin ? 'admin ' : ''}account ${account.email} (${account.id})`);
}

export async function listUsers(store: StateStore, options: { json?: boolean }) {
  const now = Date.now();
  const accounts: AccountSecrets[] = [];
  for (const account of await store.listAccounts()) {
    if (account.email === OPERATOR_EMAIL) continue;
    const full = await store.accountById(account.id);
    if (full) accounts.push(full);
  }
  const rows = accounts.map((a) => ({
    ...publicAccount(a),
    lockedUntil: isLocked(a, now) ? a.lockedUntil : null,
  }));
  printList(rows, options, 'no accounts', (a) => ({
    email: a.email,
    id: a.id,
    admin: a.admin,
    created: a.createdAt,
    disabled: a.disabledAt ?? '',
    locked: a.lockedUntil ? `until ${a.lockedUntil}` : '',
  }));
}

export async function resetPassword(store: StateStore, email: string, askPassword: () => Promise<string>) {
  const account = await accountNamed(store, email);
  const password = await askPassword();
  const problem = passwordProblem(password);
  if (problem) throw new CliFailure(`${problem} Nothing was changed.`);
  await store.setPasswordHash(account.id, await hashPassword(password));
  // A reset usually means the old password is not to be trusted: its sessions end with it.
  await store.deleteSessionsOf(account.id);
  console.log(
    `new password set for ${account.email}; its sessions ended and any sign-in lockout was cleared`,
  );
}

export async function unlockUser(store: StateStore, email: string) {
  const account = await accountNamed(store, email);
  if (account.failedSignIns === 0 && !isLocked(account)) {
    console.log(`${account.email} was not locked; nothing changed`);
    return;
  }
  await store.clearSignInFailures(account.id);
  console.log(`unlocked ${account.email}: its ${account.failedSignIns} failed sign-ins are forgotten`);
}

export async function setDisabled(store: StateStore, email: string, disabled: boolean) {
  const account = await accountNamed(store, email);
  await store.setAccountDisabled(account.id, disabled);
  if (!disabled) {
    console.log(`enabled ${account.email}`);
    return;
  }
  await store.deleteSessionsOf(account.id);
  console.log(`disabled ${account.email}: its sessions ended; ${KEY_CACHE_NOTE}`);
}

export async function setAdmin(store: StateStore, email: string, admin: boolean) {
  const account = await accountNamed(store, email);
  if (account.admin === admin) {
    console.log(`${account.email} ${admin ? 'is already' : 'is not'} an administrator; nothing changed`);
    return;
  }
  await store.setAccountAdmin(account.id, admin);
  if (admin) {
    console.log(`${account.email} is now an administrator (from its next page in the console)`);
    return;
  }
  const admins = (await store.listAccounts()).filter((a) => a.admin && !a.disabledAt);
  const note =
    admins.length === 0
      ? '; no enabled administrator is left: make one with `npm run users -- promote --email EMAIL`'
      : '';
  console.log(`${account.email} is no longer an administrator${note}`);
}
