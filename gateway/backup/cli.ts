/**
 * `npm run backup -- --to DIR` and `npm run backup -- restore --from DIR [--force]`: the
 * SQLite stores of DATA_DIR (the state store and memory). With DATABASE_URL the state is in
 * Postgres, which has its own tools: the command says which and copies nothing.
 */
import { Command, CommanderError } from 'commander';
import { ConfigError, loadGatewayConfig } from '../config.ts';
import { backupDataDir, formatBytes } from './backup.ts';
import { MANIFEST_NAME } from './manifest.ts';
import { RestoreRefused, restoreDataDir } from './restore.ts';

const EXIT_CODES = `
Exit codes:
  0  done
  1  failed or refused (the message says why; a refused restore changed nothing)
  2  usage error: unknown command or option, missing argument
  3  nothing copied: DATABASE_URL is set, so the state is in Postgres (use pg_dump / pg_restore as printed)`;

/** Stops with exit 1 and a message, no usage. */
class Failure extends Error {}

/** Exit 3: not a backup, so a scheduled job that runs it does not pass for one. */
const POSTGRES_EXIT = 3;

function postgresGuidance(): string {
  return [
    'DATABASE_URL is set: accounts, keys, quotas and memory live in Postgres, not in DATA_DIR, so nothing was copied.',
    'Back up and restore that database with its own tools:',
    '',
    '  pg_dump --format=custom --file=mcp-gateway.dump "$DATABASE_URL"',
    '  pg_restore --clean --if-exists --no-owner --dbname="$DATABASE_URL" mcp-gateway.dump',
    '',
    'Restore into a database with the pgvector extension (memory needs pgvector >= 0.8), with the gateways stopped.',
  ].join('\n');
}

/** DATA_DIR from --data-dir or the gateway's settings; null when the state is in Postgres. */
function dataDirOf(option: string | undefined): string | null {
  let config: ReturnType<typeof loadGatewayConfig>;
  try {
    config = loadGatewayConfig();
  } catch (error) {
    if (error instanceof ConfigError) throw new Failure(`${error.message}\nFix that setting and run again.`);
    throw error;
  }
  if (config.DATABASE_URL) {
    process.stdout.write(`${postgresGuidance()}\n`);
    process.exitCode = POSTGRES_EXIT;
    return null;
  }
  return option ?? config.DATA_DIR;
}

async function backupAction(options: { to?: string; dataDir?: string }, command: Command): Promise<void> {
  if (!options.to) command.error('error: say where the backup goes: --to DIR', { exitCode: 2 });
  const dataDir = dataDirOf(options.dataDir);
  if (dataDir === null) return;
  const manifest = await backupDataDir({ dataDir, to: options.to, log: (line) => console.log(line) }).catch(
    (error: Error) => {
      throw new Failure(`backup failed: ${error.message}`);
    },
  );
  const total = manifest.files.reduce((sum, file) => sum + file.bytes, 0);
  console.log(
    `backed up ${manifest.files.length} store${manifest.files.length === 1 ? '' : 's'} (${formatBytes(total)}) from ${manifest.dataDir} to ${options.to}; manifest: ${MANIFEST_NAME}`,
  );
}

async function restoreAction(
  options: { from: string; dataDir?: string; force?: boolean },
  command: Command,
): Promise<void> {
  // --data-dir may stand before `restore` (the program's option) or after it (restore's own).
  const dataDir = dataDirOf(options.dataDir ?? command.optsWithGlobals<{ dataDir?: string }>().dataDir);
  if (dataDir === null) return;
  try {
    const manifest = await restoreDataDir({
      from: options.from,
      dataDir,
      force: options.force ?? false,
      log: (line) => console.log(line),
    });
    console.log(
      `restored the backup taken ${manifest.startedAt} from ${manifest.dataDir}; start the gateway on ${dataDir}`,
    );
  } catch (error) {
    if (error instanceof RestoreRefused) throw new Failure(`restore refused: ${error.message}`);
    throw new Failure(`restore failed: ${(error as Error).message}`);
  }
}

function backupProgram(): Command {
  const program = new Command('npm run backup --')
    .description("online copy of DATA_DIR's SQLite stores (state store and memory) with a manifest")
    .option('--to <dir>', 'a new directory for the backup (created if missing)')
    .option('--data-dir <dir>', 'the stores to copy (default: DATA_DIR, else ./data)')
    .showHelpAfterError()
    .exitOverride()
    // Without this the program's --data-dir takes the value written after `restore` too,
    // and restore would fall back to DATA_DIR.
    .enablePositionalOptions()
    .action(backupAction);
  program
    .command('restore')
    .description("put a backup's stores into a stopped gateway's DATA_DIR")
    .requiredOption('--from <dir>', 'a directory written by npm run backup -- --to')
    .option('--data-dir <dir>', 'where to restore (default: DATA_DIR, else ./data)')
    .option('--force', 'replace stores that already exist there (never ones in use)')
    .showHelpAfterError()
    .action(restoreAction);
  for (const command of [program, ...program.commands]) command.addHelpText('after', EXIT_CODES);
  return program;
}

async function runBackupCli(argv: string[]): Promise<number> {
  try {
    await backupProgram().parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    // Commander has printed the message and usage already; --help is not an error.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof Failure) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

process.exitCode = await runBackupCli(process.argv.slice(2));
