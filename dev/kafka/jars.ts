import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LocalKafkaError, quoteOutput, tailLines } from './errors.ts';
import { execTool } from './exec.ts';
import { FetchProgress } from './fetch-progress.ts';
import { KAFKA_VERSION, LOG4J_VERSION, SCALA_VERSION } from './paths.ts';

/** Maven can stall on a dead network for a long time; give up with a message instead. */
const FETCH_TIMEOUT_MS = 10 * 60_000;

const DEPENDENCY_PLUGIN_VERSION = '3.8.1';

const kafkaJar = `kafka_${SCALA_VERSION}-${KAFKA_VERSION}.jar`;

function pom(): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.dev</groupId>
  <artifactId>local-kafka-libs</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_${SCALA_VERSION}</artifactId>
      <version>${KAFKA_VERSION}</version>
    </dependency>
    <dependency>
      <!-- Kafka logs through slf4j 1.x; this binding routes it to log4j2 so the broker log is written. -->
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>${LOG4J_VERSION}</version>
    </dependency>
  </dependencies>
</project>
`;
}

/** The cache is complete exactly when `libs` exists: it only ever appears by an atomic rename. */
export function cachedLibs(cacheDir: string): string | undefined {
  const libs = join(cacheDir, 'libs');
  return existsSync(join(libs, kafkaJar)) ? libs : undefined;
}

/**
 * Returns the directory holding every jar the broker needs, fetching them from Maven Central on
 * first use. Downloads land in a private temp dir that is renamed into place only once Maven has
 * finished, so an interrupted fetch leaves no half-filled `libs` behind to be trusted later.
 */
export async function ensureKafkaLibs(cacheDir: string, log: (line: string) => void): Promise<string> {
  const ready = cachedLibs(cacheDir);
  if (ready) return ready;

  await mkdir(cacheDir, { recursive: true });
  await removeStaleTempDirs(cacheDir);
  const work = join(cacheDir, `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(work);
  try {
    await writeFile(join(work, 'pom.xml'), pom());
    log(`fetching Apache Kafka ${KAFKA_VERSION} jars from Maven Central into ${cacheDir} (first run only)`);
    const started = Date.now();
    // Not -q: Maven's transfer lines are what the progress counts.
    const progress = new FetchProgress(log);
    const result = await execTool(
      'mvn',
      [
        '-B',
        '-f',
        join(work, 'pom.xml'),
        '-Dstyle.color=never',
        // Fully qualified, so a dead network reports the download that failed rather than an unknown prefix.
        `org.apache.maven.plugins:maven-dependency-plugin:${DEPENDENCY_PLUGIN_VERSION}:copy-dependencies`,
        `-DoutputDirectory=${join(work, 'libs')}`,
        '-DincludeScope=runtime',
      ],
      { cwd: work, timeoutMs: FETCH_TIMEOUT_MS, onOutput: (chunk) => progress.take(chunk) },
    ).finally(() => progress.finish());
    if ('missing' in result) {
      throw new LocalKafkaError(
        'MAVEN_MISSING',
        'Maven (`mvn`) not found on PATH; it is needed once to fetch the Kafka jars. ' +
          'Install it (e.g. `apt-get install -y maven`) and run again.',
      );
    }
    if (result.timedOut || result.code !== 0 || !existsSync(join(work, 'libs', kafkaJar))) {
      const why = result.timedOut
        ? `mvn did not finish within ${FETCH_TIMEOUT_MS / 60_000} minutes`
        : `mvn failed (exit ${result.code ?? result.signal})`;
      throw new LocalKafkaError(
        'FETCH_FAILED',
        `Could not fetch the Kafka jars from Maven Central: ${why}. Check network access to ` +
          'https://repo.maven.apache.org (or the mirror/proxy in ~/.m2/settings.xml) and run again.\n' +
          quoteOutput('last lines of mvn output', tailLines(stripAnsi(result.output), 25)),
      );
    }
    try {
      await rename(join(work, 'libs'), join(cacheDir, 'libs'));
    } catch (error) {
      // Another process finished the same fetch first; its copy is just as good.
      if (!cachedLibs(cacheDir)) throw error;
    }
    const count = (await readdir(join(cacheDir, 'libs'))).length;
    log(`fetched ${count} jars in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return join(cacheDir, 'libs');
}

function stripAnsi(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes start with ESC.
  return text.replace(/\x1b\[[0-9;]*m/g, '');
}

/** Leftovers of fetches that were killed; only ones whose owning process is gone are removed. */
async function removeStaleTempDirs(cacheDir: string): Promise<void> {
  for (const name of await readdir(cacheDir)) {
    const match = /^\.tmp-(\d+)-/.exec(name);
    if (!match) continue;
    if (isAlive(Number(match[1]))) continue;
    await rm(join(cacheDir, name), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
