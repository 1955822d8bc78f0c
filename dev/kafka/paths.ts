import { join } from 'node:path';
import { packageRoot } from '../../shared/package-root.ts';

/** The checkout this file lives in; the jar cache and the dev data dir hang off it. */
export const repoRoot = packageRoot(import.meta.dirname);

export const KAFKA_VERSION = '4.1.1';
export const SCALA_VERSION = '2.13';
export const LOG4J_VERSION = '2.24.3';

/** Outside git (`.cache/` is ignored) and shared by every data dir, so jars are fetched once. */
export const defaultCacheDir = join(repoRoot, '.cache', `kafka-${KAFKA_VERSION}`);

export const defaultDevDataDir = join(repoRoot, 'data', 'kafka');
