/**
 * What `npm run keys` and `npm run users` share: commander set up so every command has
 * --help, usage errors exit 2 with the command's usage, failures exit 1 with a message that
 * says what to do, and the state store is opened only after the arguments were checked.
 */
import { Command, CommanderError } from 'commander';
import { ConfigError, type GatewayConfig, loadGatewayConfig } from '../config.ts';

export const EXIT_CODES = `
Exit codes:
  0  done
  1  failed: the named key or account does not exist, or the store could not be used
     (the message says what to fix; nothing was changed)
  2  usage error: unknown command or option, missing or malformed argument (nothing was changed)`;

/** A refusal after the arguments were understood: exit 1, no usage printed. */
export class CliFailure extends Error {}

/** A malformed argument found by the command's own checks: reported as a usage error. */
export class UsageProblem extends Error {}

/** Stops the running command as a usage error: its usage follows the message, exit 2. */
export function usageError(command: Command, message: string): never {
  command.error(`error: ${message}`, { exitCode: 2, code: 'cli.usage' });
}

/**
 * Wraps a command's action so a UsageProblem it throws becomes that command's usage error.
 * Commander passes the command itself as the action's last argument.
 */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void>) {
  return async (...args: A): Promise<void> => {
    try {
      await fn(...args);
    } catch (error) {
      if (error instanceof UsageProblem) usageError(args[args.length - 1] as Command, error.message);
      throw error;
    }
  };
}

/** A list command's answer: JSON when asked for, else a table, or the line `none` when the list is empty. */
export function printList<T>(
  items: T[],
  options: { json?: boolean },
  none: string,
  row: (item: T) => Record<string, unknown>,
): void {
  if (options.json) console.log(JSON.stringify(items));
  else if (items.length === 0) console.log(none);
  else console.table(items.map(row));
}

export function newProgram(name: string, description: string): Command {
  const program = new Command(name)
    .description(description)
    .showHelpAfterError()
    .showSuggestionAfterError()
    .configureHelp({ sortSubcommands: false })
    .exitOverride();
  return program;
}

/** Every command gets the exit codes in its help; subcommands inherit the error handling. */
export function finishProgram(program: Command): Command {
  for (const command of [program, ...program.commands]) command.addHelpText('after', EXIT_CODES);
  return program;
}

export function loadConfig(): GatewayConfig {
  try {
    return loadGatewayConfig();
  } catch (error) {
    if (error instanceof ConfigError)
      throw new CliFailure(`${error.message}\nFix that setting and run again.`);
    throw error;
  }
}

/** Runs the program; the exit code follows the documented table, whatever was thrown. */
export async function runProgram(program: Command, argv: string[]): Promise<void> {
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has already printed the message (and the usage); --help and --version are not errors.
      process.exitCode = error.exitCode === 0 ? 0 : 2;
      return;
    }
    if (error instanceof CliFailure) {
      process.stderr.write(`${error.message}\n`);
      process.exitCode = 1;
      return;
    }
    throw error;
  }
}
