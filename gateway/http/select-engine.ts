import type { HttpEngine } from './engine.ts';
import { loadUws } from './uws-loader.ts';

export type EngineChoice = 'auto' | 'uws' | 'node';

export interface EngineSelection {
  engine: HttpEngine;
  /** Why uWS was not used, when it was not. */
  fallbackReasons: string[];
}

/**
 * `auto` prefers uWS and falls back to node:http; `uws` refuses to start without a loadable
 * build. Only the chosen engine's module is loaded: node:http and its parser stay out of a
 * gateway serving with uWS.
 */
export async function selectEngine(choice: EngineChoice): Promise<EngineSelection> {
  const nodeEngine = async () => (await import('./node-engine.ts')).createNodeEngine();
  if (choice === 'node') return { engine: await nodeEngine(), fallbackReasons: ['HTTP_ENGINE=node'] };
  const { loaded, failures } = loadUws();
  if (loaded)
    return { engine: (await import('./uws-engine.ts')).createUwsEngine(loaded), fallbackReasons: [] };
  if (choice === 'uws') {
    throw new Error(`HTTP_ENGINE=uws but no uWebSockets.js build loads here: ${failures.join('; ')}`);
  }
  return { engine: await nodeEngine(), fallbackReasons: failures };
}
