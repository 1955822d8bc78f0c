import { join } from 'node:path';
import { LocalKafkaError, quoteOutput } from './errors.ts';
import { execTool } from './exec.ts';

export const MIN_JAVA_MAJOR = 17;

export interface JavaTools {
  java: string;
  keytool: string;
  major: number;
}

/** JAVA_HOME wins over PATH, the same rule Kafka's own scripts follow. */
function toolPath(name: string): string {
  const home = process.env.JAVA_HOME;
  return home ? join(home, 'bin', name) : name;
}

/** `java -version` prints `"17.0.15"` or, on Java 8 and older, `"1.8.0_402"`. */
export function parseJavaMajor(versionOutput: string): number | undefined {
  const match = /version "(\d+)(?:\.(\d+))?[^"]*"/.exec(versionOutput);
  if (!match) return undefined;
  const first = Number(match[1]);
  return first === 1 && match[2] !== undefined ? Number(match[2]) : first;
}

/** Kafka 4.x brokers need Java 17; fail before any download if the JDK cannot run them. */
export async function findJava(): Promise<JavaTools> {
  const java = toolPath('java');
  const where = process.env.JAVA_HOME ? `JAVA_HOME (${process.env.JAVA_HOME})` : 'PATH';
  const result = await execTool(java, ['-version'], { timeoutMs: 30_000 });
  if ('missing' in result) {
    throw new LocalKafkaError(
      'JAVA_MISSING',
      `Java not found on ${where}. Install a JDK ${MIN_JAVA_MAJOR} or newer ` +
        '(e.g. `apt-get install -y openjdk-17-jdk-headless`) or point JAVA_HOME at one.',
    );
  }
  const major = parseJavaMajor(result.output);
  if (result.code !== 0 || major === undefined) {
    throw new LocalKafkaError(
      'JAVA_MISSING',
      `${java} -version did not report a version; check the JDK on ${where}.\n${quoteOutput('output', result.output)}`,
    );
  }
  if (major < MIN_JAVA_MAJOR) {
    throw new LocalKafkaError(
      'JAVA_TOO_OLD',
      `Java ${major} found on ${where}, but Kafka 4.x needs Java ${MIN_JAVA_MAJOR} or newer. ` +
        `Install a JDK ${MIN_JAVA_MAJOR}+ and put it first on PATH or set JAVA_HOME.`,
    );
  }
  return { java, keytool: toolPath('keytool'), major };
}
