import type { HttpEngine } from './engine.ts';
import { createNodeEngine } from './node-engine.ts';
import { createUwsEngine } from './uws-engine.ts';
import { loadUws } from './uws-loader.ts';

export type EngineChoice = 'auto' | 'uws' | 'node';

export interface EngineSelection {
  engine: HttpEngine;
  /** Why uWS was not used, when it was not. */
  fallbackReasons: string[];
}

/** `auto` prefers uWS and falls back to node:http; `uws` refuses to start without a loadable build. */
export function selectEngine(choice: EngineChoice): EngineSelection {
  if (choice === 'node') return { engine: createNodeEngine(), fallbackReasons: ['HTTP_ENGINE=node'] };
  const { loaded, failures } = loadUws();
  if (loaded) return { engine: createUwsEngine(loaded), fallbackReasons: [] };
  if (choice === 'uws') {
    throw new Error(`HTTP_ENGINE=uws but no uWebSockets.js build loads here: ${failures.join('; ')}`);
  }
  return { engine: createNodeEngine(), fallbackReasons: failures };
}
