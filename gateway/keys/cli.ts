/**
 * `npm run keys -- <command>`: API keys on whichever store the gateway uses (SQLite in
 * DATA_DIR, or Postgres with DATABASE_URL). A key is printed once, when created or rotated;
 * the store keeps only its hash.
 */
import { type Command, Option } from 'commander';
import { storeAction } from '../accounts/with-store.ts';
import { finishProgram, newProgram, runProgram } from '../cli/program.ts';
import { BURST_FORM, MAX_POLLS_FORM, QUOTA_FORM, RATE_FORM } from '../core/key-limits.ts';
import { NAMESPACE_NAMES } from '../core/namespace-names.ts';
import { checkUpdateFlags, listKeys, revokeKey, showKeyCommand, updateKey } from './commands.ts';
import { type CreateOptions, createKey, expiryFrom, limitsFrom, scopesFrom } from './create-command.ts';
import { parseGrace, pruneKeys, type RotateOptions, rotateKey } from './lifecycle-commands.ts';

const JSON_HELP = 'print one line of JSON instead of text';
const URL_HELP = 'base URL clients reach the gateway at (default: PUBLIC_BASE_URL, else http://HOST:PORT)';

function limitOptions(command: Command): Command {
  return command
    .option('--rate <rate>', `requests per key: ${RATE_FORM}`)
    .option('--burst <n>', `requests a key may send at once: ${BURST_FORM}`)
    .option('--quota <quotas>', `calls per UTC day: ${QUOTA_FORM}`)
    .option('--max-polls <n>', `concurrent event_consume calls per gateway: ${MAX_POLLS_FORM}`);
}

/** A command on one key, named by its id. */
function keyCommand(program: Command, name: string, description: string): Command {
  return program.command(name).description(description).argument('<keyId>', 'the key id, key_… (see list)');
}

function addCreate(program: Command): void {
  const create = program
    .command('create')
    .description('create a key and print it once, with a ready setup for every MCP client')
    .requiredOption('--label <label>', 'what the key is for, shown in listings')
    .option('--owner <email>', 'owning account (created, without a password, if new; default: operator)')
    .option('--namespaces <list>', `comma-separated namespaces (${NAMESPACE_NAMES.join(', ')}; default: all)`)
    .option('--read-only', 'only tools annotated read-only')
    .option('--publish <patterns>', 'event topics it may publish to, * as wildcard ("" for none; default: *)')
    .option('--consume <patterns>', 'event topics it may consume, * as wildcard ("" for none; default: *)')
    .option('--expires <date>', 'last day (UTC) the key works, YYYY-MM-DD');
  limitOptions(create)
    .option('--url <url>', URL_HELP)
    .option('--json', JSON_HELP)
    .addHelpText(
      'after',
      '\nWithout scope options the key may do everything. Without --rate it follows RATE_LIMIT_DEFAULT;\n--rate none lifts every rate limit for it.',
    )
    .action(
      storeAction(createKey, (options: CreateOptions) => {
        scopesFrom(options);
        expiryFrom(options.expires);
        limitsFrom({}, options);
      }),
    );
}

function addReaders(program: Command): void {
  program
    .command('list')
    .description('list every key with its owner, scopes, limits and dates (never the key)')
    .option('--json', JSON_HELP)
    .action(storeAction(listKeys));
  keyCommand(program, 'show', "show one key's limits and its metered calls today")
    .option('--json', JSON_HELP)
    .action(storeAction(showKeyCommand));
}

function addChanges(program: Command): void {
  limitOptions(
    keyCommand(program, 'update', "change a key's limits; gateways apply it within API_KEY_CACHE_TTL_MS"),
  )
    .option('--json', JSON_HELP)
    .addHelpText('after', '\nOnly the limits named change; --rate without --burst resets the burst.')
    .action(storeAction(updateKey, (_id, options) => checkUpdateFlags(options)));
  keyCommand(program, 'revoke', 'revoke a key; gateways stop admitting it within API_KEY_CACHE_TTL_MS')
    .option('--json', JSON_HELP)
    .action(
      storeAction((store, _config, id: string, options: { json?: boolean }) => revokeKey(store, id, options)),
    );
}

function addLifecycle(program: Command): void {
  keyCommand(
    program,
    'rotate',
    'give a key a new secret under the same id; the old secret works through --grace',
  )
    .addOption(
      new Option('--grace <duration>', 'how long the old secret keeps working: 60s, 15m, 2h, or 0').default(
        '0',
      ),
    )
    .option('--url <url>', URL_HELP)
    .option('--json', JSON_HELP)
    .addHelpText(
      'after',
      '\nPrints the new secret once, with client setups. Move clients to it within the grace period:\nno request fails meanwhile. After it the old secret is refused (HTTP 401).',
    )
    .action(storeAction(rotateKey, (_id, options: RotateOptions) => parseGrace(options.grace)));
  program
    .command('prune')
    .description('delete revoked and expired keys with their usage counts; prints what it removed')
    .option('--dry-run', 'only print what would be removed')
    .option('--json', JSON_HELP)
    .action(
      storeAction((store, _config, options: { dryRun?: boolean; json?: boolean }) =>
        pruneKeys(store, options),
      ),
    );
}

function keysProgram(): Command {
  const program = newProgram('npm run keys --', 'Create, inspect, limit, rotate, revoke and prune API keys.');
  addCreate(program);
  addReaders(program);
  addChanges(program);
  addLifecycle(program);
  return finishProgram(program);
}

await runProgram(keysProgram(), process.argv.slice(2));
