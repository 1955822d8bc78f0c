/**
 * `npm run users -- <command>`: console accounts on whichever store the gateway uses
 * (SQLite in DATA_DIR, or Postgres with DATABASE_URL).
 */
import { type Command, Option } from 'commander';
import { finishProgram, newProgram, runProgram, UsageProblem } from '../cli/program.ts';
import type { StateStore } from './model.ts';
import { normalizeEmail } from './model.ts';
import { readPassword } from './password-input.ts';
import { createUser, listUsers, resetPassword, setAdmin, setDisabled, unlockUser } from './user-commands.ts';
import { storeAction } from './with-store.ts';

const JSON_HELP = 'print JSON instead of text';
const PASSWORD_HELP =
  '\nThe password is read from standard input when it is piped (one trailing newline is dropped),\nelse from a prompt that does not echo. It is never taken as an argument.';

interface EmailOptions {
  email: string;
  password?: string;
}

function checkedEmail(options: EmailOptions): string {
  if (options.password !== undefined) {
    throw new UsageProblem(
      'passwords are never taken as arguments (shell history and ps would show them); pipe it on standard input or type it at the prompt',
    );
  }
  const email = normalizeEmail(options.email);
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) {
    throw new UsageProblem(`--email takes an email address like you@example.com (got "${options.email}")`);
  }
  return email;
}

/** A command naming one account by --email; a stray --password is refused with the reason. */
function accountCommand(program: Command, name: string, description: string): Command {
  return program
    .command(name)
    .description(description)
    .requiredOption('--email <address>', "the account's email")
    .addOption(new Option('--password <password>').hideHelp());
}

function onAccount(fn: (store: StateStore, email: string) => Promise<void>) {
  return storeAction(
    (store, _config, options: EmailOptions) => fn(store, normalizeEmail(options.email)),
    checkedEmail,
  );
}

function addPasswordCommands(program: Command): void {
  accountCommand(program, 'create', 'create an account that signs in to the console')
    .option('--admin', 'make it an administrator')
    .option('--json', JSON_HELP)
    .addHelpText('after', PASSWORD_HELP)
    .action(
      storeAction(
        (store, _config, options: EmailOptions & { admin?: boolean; json?: boolean }) =>
          createUser(store, normalizeEmail(options.email), readPassword, options),
        checkedEmail,
      ),
    );
  accountCommand(
    program,
    'reset-password',
    'give an account a new password; ends its sessions, clears its lockout',
  )
    .addHelpText('after', PASSWORD_HELP)
    .action(onAccount((store, email) => resetPassword(store, email, readPassword)));
}

function addStateCommands(program: Command): void {
  accountCommand(program, 'unlock', 'clear the sign-in lockout and failure count of an account').action(
    onAccount(unlockUser),
  );
  accountCommand(program, 'disable', 'stop an account: its sessions end and its keys stop working').action(
    onAccount((store, email) => setDisabled(store, email, true)),
  );
  accountCommand(program, 'enable', 'let a disabled account sign in and its keys work again').action(
    onAccount((store, email) => setDisabled(store, email, false)),
  );
  accountCommand(
    program,
    'promote',
    "make an account an administrator (sees and manages everyone's keys)",
  ).action(onAccount((store, email) => setAdmin(store, email, true)));
  accountCommand(program, 'demote', 'make an administrator an ordinary account').action(
    onAccount((store, email) => setAdmin(store, email, false)),
  );
}

function usersProgram(): Command {
  const program = newProgram('npm run users --', 'Manage the accounts that sign in to the key console.');
  program
    .command('list')
    .description('list accounts: admin, disabled and locked state (never a password)')
    .option('--json', JSON_HELP)
    .action(storeAction((store, _config, options: { json?: boolean }) => listUsers(store, options)));
  addPasswordCommands(program);
  addStateCommands(program);
  return finishProgram(program);
}

await runProgram(usersProgram(), process.argv.slice(2));
