/**
 * The one behaviour suite every memory store adapter must pass (SQLite and Postgres run
 * the same cases). Each case uses fresh api key ids, so cases share one store per file.
 * Cases: store-suite-rows.ts (writes, reads, lists, deletes, stats) and
 * store-suite-search.ts (search and embeddings), store-suite-updates.ts (supersession and
 * keyword matching), store-suite-writes.ts (the write plan's decisions); what they share:
 * store-suite-helpers.ts; store-suite-event-time.ts (occurred_at and batched writes).
 */
import type { MemoryStore } from '../../../gateway/namespaces/memory/store/types.ts';
import { memoryEventTimeCases } from './store-suite-event-time.ts';
import { memoryRowCases } from './store-suite-rows.ts';
import { memorySearchCases } from './store-suite-search.ts';
import { memoryUpdateCases } from './store-suite-updates.ts';
import { memoryWriteCases } from './store-suite-writes.ts';

export function memoryStoreSuite(name: string, getStore: () => MemoryStore): void {
  memoryRowCases(name, getStore);
  memorySearchCases(name, getStore);
  memoryUpdateCases(name, getStore);
  memoryWriteCases(name, getStore);
  memoryEventTimeCases(name, getStore);
}
