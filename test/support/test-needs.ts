/**
 * What a run's selected test files need from the runner, read from their import graphs
 * (static imports, re-exports and literal dynamic imports of relative modules), so
 * `npm test -- memory` starts no Kafka and needs no Java. A file gets the shared broker's
 * address only through test/support/kafka-env.ts, and its `testKafka()` throws when the
 * runner did not start one, so a file this scan missed fails loudly instead of passing
 * against nothing.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';

export interface TestNeeds {
  /** The selected files that reach test/support/kafka-env.ts (and not the cluster's module). */
  kafka: string[];
  /**
   * The selected files that reach test/support/kafka-cluster-env.ts: they run after the
   * others, one at a time, on a three-broker cluster started for them.
   */
  kafkaCluster: string[];
  /**
   * The selected files that reach gateway code or the MiniLM helper: a gateway on default
   * settings embeds with MiniLM, so its model is set up before they run.
   */
  minilm: string[];
}

const KAFKA_MODULE = 'test/support/kafka-env.ts';
const KAFKA_CLUSTER_MODULE = 'test/support/kafka-cluster-env.ts';
const MINILM_MODULES = ['test/support/minilm.ts', 'gateway/'];

// `from '…'`, `import '…'` and `import('…')`; the specifier is all that matters here.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)(['"])(\.{1,2}\/[^'"]+)\1/g;

/** Relative specifiers in one module, resolved to paths under root. */
async function importsOf(root: string, file: string): Promise<string[]> {
  let source: string;
  try {
    source = await readFile(join(root, file), 'utf8');
  } catch {
    return [];
  }
  const found: string[] = [];
  for (const match of source.matchAll(SPECIFIER)) {
    const target = relative(root, resolve(join(root, dirname(file)), match[2]!));
    // TypeScript sources here import each other with .ts; a .js specifier names the same module.
    found.push(target.endsWith('.js') ? `${target.slice(0, -3)}.ts` : target);
  }
  return found;
}

/** Every module one test file reaches, itself included (paths relative to root). */
async function reach(
  root: string,
  file: string,
  cache: Map<string, Promise<string[]>>,
): Promise<Set<string>> {
  const seen = new Set<string>([file]);
  const queue = [file];
  while (queue.length > 0) {
    const current = queue.pop()!;
    let pending = cache.get(current);
    if (!pending) {
      pending = importsOf(root, current);
      cache.set(current, pending);
    }
    for (const next of await pending) {
      if (seen.has(next)) continue;
      seen.add(next);
      queue.push(next);
    }
  }
  return seen;
}

export async function testNeeds(root: string, files: string[]): Promise<TestNeeds> {
  const cache = new Map<string, Promise<string[]>>();
  const needs: TestNeeds = { kafka: [], kafkaCluster: [], minilm: [] };
  for (const file of files) {
    const reached = [...(await reach(root, file, cache))];
    if (reached.includes(KAFKA_CLUSTER_MODULE)) needs.kafkaCluster.push(file);
    else if (reached.includes(KAFKA_MODULE)) needs.kafka.push(file);
    if (reached.some((module) => MINILM_MODULES.some((prefix) => module.startsWith(prefix))))
      needs.minilm.push(file);
  }
  return needs;
}
