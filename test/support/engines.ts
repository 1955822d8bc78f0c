import { loadUws } from '../../gateway/http/uws-loader.ts';

/** Both HTTP engines, for suites that run the same assertions on each. */
export const ENGINES = ['uws', 'node'] as const;

/**
 * Why a suite for this engine cannot run here, or false. No uWebSockets.js build loads on
 * Node 22 or 24 with this glibc, and the gateway falls back to node:http there (docs/deployment.md), so
 * on those runtimes the uws suites are skipped with that reason instead of failing to start.
 */
export function engineSkip(engine: (typeof ENGINES)[number]): string | false {
  if (engine === 'node') return false;
  const { loaded, failures } = loadUws();
  return loaded ? false : `no uWebSockets.js build loads on Node ${process.version}: ${failures.join('; ')}`;
}
