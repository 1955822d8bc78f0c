/**
 * Every failure a developer can hit while starting the local broker is a LocalKafkaError with a
 * stable `code` (so callers and tests can branch on it) and a message that says what to do next.
 */
export type LocalKafkaErrorCode =
  | 'JAVA_MISSING'
  | 'JAVA_TOO_OLD'
  | 'MAVEN_MISSING'
  | 'FETCH_FAILED'
  | 'PORT_IN_USE'
  | 'BAD_OPTION'
  | 'ALREADY_RUNNING'
  | 'FORMAT_FAILED'
  | 'TLS_FAILED'
  | 'EXITED_DURING_START'
  | 'START_TIMEOUT';

export class LocalKafkaError extends Error {
  readonly code: LocalKafkaErrorCode;

  constructor(code: LocalKafkaErrorCode, message: string) {
    super(message);
    this.name = 'LocalKafkaError';
    this.code = code;
  }
}

/** Indents a block of tool output so it reads as a quotation under the error line. */
export function quoteOutput(title: string, text: string): string {
  const body = text.trimEnd();
  if (body === '') return `${title}: (no output)`;
  return `${title}:\n${body
    .split('\n')
    .map((line) => `  | ${line}`)
    .join('\n')}`;
}

/** The last `lines` lines of a text, which is where JVM and Maven failures explain themselves. */
export function tailLines(text: string, lines: number): string {
  const all = text.trimEnd().split('\n');
  return all.slice(-lines).join('\n');
}
