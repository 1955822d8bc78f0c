/**
 * The dispatch the development CLIs share (`npm run kafka`, `npm run postgres`): words that do
 * not parse, or a missing or unknown command, print the usage and exit 2; `help` prints it and
 * exits 0; the tool's own failure (no Java, a port in use) is one line prefixed by the tool's
 * name and exit 1; anything else is a bug and is thrown with its stack. And the guard both
 * `start` commands put around a start that detaches a server.
 */

export interface CommandLine<Options> {
  usage: string;
  /** The command (`help` for -h / --help) and its options; throws on words it cannot read. */
  parse(argv: string[]): { command: string; options: Options };
  commands: Record<string, (options: Options) => Promise<number>>;
  /** The tool's own error class, whose message already says what to do. */
  toolError: abstract new (
    ...args: never[]
  ) => Error;
  /** Prefix of a tool error's line, e.g. `local kafka`. */
  label: string;
}

/**
 * Runs `start`; Ctrl-C or SIGTERM meanwhile stops what was starting and exits 130, so an
 * interrupted start leaves no half-started detached server behind.
 */
export async function stopIfInterrupted<T>(
  what: string,
  stop: () => Promise<unknown>,
  start: () => Promise<T>,
): Promise<T> {
  const interrupt = () => {
    console.error(`\ninterrupted: stopping ${what} that was starting`);
    void stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    return await start();
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  }
}

/** Runs the command `argv` names and returns the process exit code. */
export async function runCommand<Options>(argv: string[], cli: CommandLine<Options>): Promise<number> {
  let parsed: { command: string; options: Options };
  try {
    parsed = cli.parse(argv);
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${cli.usage}`);
    return 2;
  }
  const { command, options } = parsed;
  if (command === 'help') {
    console.log(cli.usage);
    return 0;
  }
  const run = Object.hasOwn(cli.commands, command) ? cli.commands[command] : undefined;
  if (!run) {
    console.error(`${command ? `unknown command: ${command}` : 'missing command'}\n\n${cli.usage}`);
    return 2;
  }
  try {
    return await run(options);
  } catch (error) {
    if (error instanceof cli.toolError) {
      console.error(`${cli.label}: ${error.message}`);
      return 1;
    }
    throw error;
  }
}
