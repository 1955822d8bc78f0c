/**
 * `npm run users -- create --email E [--admin] | list [--json] | disable --email E | enable --email E`
 * The password comes from standard input when it is piped, else from a prompt that does not echo.
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { ConfigError, loadGatewayConfig } from '../config.ts';
import { normalizeEmail, OPERATOR_EMAIL } from './model.ts';
import { openStateStore } from './open.ts';
import { hashPassword, passwordProblem } from './passwords.ts';

const USAGE = `usage:
  npm run users -- create --email EMAIL [--admin]     (password from stdin or a prompt)
  npm run users -- list [--json]
  npm run users -- disable --email EMAIL
  npm run users -- enable --email EMAIL`;

function fail(message: string, code = 2): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(code);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One trailing newline is the pipe's, not the password's.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

function prompt(question: string): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    const output = rl as unknown as { _writeToOutput(text: string): void };
    let asked = false;
    output._writeToOutput = (text: string) => {
      // Show the question, hide what is typed.
      if (!asked) process.stderr.write(text);
      asked = true;
    };
    rl.question(question, (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
  });
}

async function readPassword(): Promise<string> {
  if (!process.stdin.isTTY) return readStdin();
  const first = await prompt('Password: ');
  const second = await prompt('Repeat password: ');
  if (first !== second) fail('the passwords differ', 1);
  return first;
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      admin: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  const [command] = positionals;
  if (!command || !['create', 'list', 'disable', 'enable'].includes(command)) {
    fail(command ? `unknown command: ${command}` : 'missing command');
  }
  let config: ReturnType<typeof loadGatewayConfig>;
  try {
    config = loadGatewayConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message, 1);
    throw error;
  }
  const email = values.email === undefined ? undefined : normalizeEmail(values.email);
  if (command !== 'list' && (!email || !/^[^\s@]+@[^\s@]+$/.test(email))) {
    fail(`${command} needs --email with an email address`);
  }
  const password = command === 'create' ? await readPassword() : '';
  const store = await openStateStore(config);
  try {
    if (command === 'create') {
      const problem = passwordProblem(password);
      if (problem) fail(problem, 1);
      if (await store.accountByEmail(email as string))
        fail(`an account with email ${email} already exists`, 1);
      const account = await store.createAccount({
        email: email as string,
        passwordHash: await hashPassword(password),
        admin: values.admin,
      });
      console.log(`created ${account.admin ? 'admin ' : ''}account ${account.email} (${account.id})`);
      return;
    }
    if (command === 'list') {
      const accounts = (await store.listAccounts()).filter((account) => account.email !== OPERATOR_EMAIL);
      if (values.json) {
        console.log(JSON.stringify(accounts));
        return;
      }
      if (accounts.length === 0) console.log('no accounts');
      else
        console.table(
          accounts.map((a) => ({
            email: a.email,
            id: a.id,
            admin: a.admin,
            created: a.createdAt,
            disabled: a.disabledAt ?? '',
          })),
        );
      return;
    }
    const account = await store.accountByEmail(email as string);
    if (!account) fail(`no account with email ${email}`, 1);
    await store.setAccountDisabled(account.id, command === 'disable');
    if (command === 'disable') await store.deleteSessionsOf(account.id);
    console.log(
      command === 'disable'
        ? `disabled ${account.email}: sessions ended; its keys stop working within API_KEY_CACHE_TTL_MS`
        : `enabled ${account.email}`,
    );
  } finally {
    await store.close();
  }
}

await main();
