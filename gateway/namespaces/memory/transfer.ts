/**
 * `npm run memory -- import FILE --key KEY_ID` and `npm run memory -- export --key KEY_ID`:
 * memories in and out of one key as JSON lines (jsonl.ts has the format).
 *
 * The import writes through the same write rule as memory_write (upsert by key, exact dedup),
 * so it can run again without duplicating lines: a line with a `key` lands on its memory, one
 * without lands on the same text in the same namespace. Lines are written in transactions of
 * IMPORT_BATCH; a transaction commits before the next line is read past it, so a stop (a bad
 * line under --strict, the cap, Ctrl-C) loses nothing that was reported imported. It never
 * evicts: a line that needs room stops the import instead of pushing out earlier lines.
 * Vectors are not made here: rows are stored pending, as a write stores them, and the
 * gateways' indexers embed them in the background (--embed embeds them in this process).
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { GatewayConfig } from '../../config.ts';
import { exportLine, lineParser } from './jsonl.ts';
import { Progress } from './progress.ts';
import type { MemorySettings } from './settings.ts';
import type { MemoryStore, WriteInput } from './store/types.ts';

/** Lines per transaction: large enough that commits cost little, small enough to show progress. */
export const IMPORT_BATCH = 500;

/** Exit codes beyond 0 (done), 1 (stopped or failed) and 2 (usage). */
export const SOME_LINES_SKIPPED = 3;

/** An API key as the import and export need it: whether it exists, and whether it was revoked. */
export type KeyLookUp = (config: GatewayConfig, id: string) => Promise<{ revokedAt: unknown } | null>;

export interface TransferContext {
  settings: MemorySettings;
  config: GatewayConfig;
  openStore: () => MemoryStore;
  /** Given by the command's entry (gateway/memory-command.ts): a namespace never opens the key store. */
  lookUpKey: KeyLookUp;
}

/** The key must exist; an import also refuses a revoked key (no caller could read what it got). */
async function checkKey(ctx: TransferContext, id: string, forImport: boolean): Promise<string | null> {
  const key = await ctx.lookUpKey(ctx.config, id);
  if (!key)
    return `no API key ${id}; \`npm run keys -- list\` shows the ids. Nothing was ${forImport ? 'imported' : 'exported'}.`;
  if (forImport && key.revokedAt) return `API key ${id} is revoked; nothing was imported.`;
  return null;
}

async function countLines(file: string): Promise<number> {
  let lines = 0;
  let last = 10;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    for (const byte of chunk) if (byte === 10) lines++;
    last = chunk.at(-1) ?? last;
  }
  return last === 10 ? lines : lines + 1;
}

interface Tally {
  created: number;
  updated: number;
  unchanged: number;
  bad: number;
}

/** Reads the file line by line into batches of writes; returns why it stopped early, or null. */
async function writeLines(
  file: string,
  total: number,
  options: { key: string; strict?: boolean },
  ctx: TransferContext,
  store: MemoryStore,
  tally: Tally,
): Promise<{ stopped: string | null; pending: number }> {
  const parse = lineParser(ctx.settings.MEMORY_MAX_CONTENT_CHARS);
  const progress = new Progress('importing', total);
  progress.detail = () =>
    `${tally.created} created, ${tally.updated} updated, ${tally.unchanged} unchanged, ${tally.bad} bad`;
  let batch: { line: number; input: WriteInput }[] = [];
  let pending = 0;
  let stopped: string | null = null;

  /** Commits the batch; returns why the import must stop, or null. */
  const flush = async (): Promise<string | null> => {
    if (batch.length === 0) return null;
    const lines = batch;
    batch = [];
    const outcome = await store.writeMany(
      options.key,
      lines.map((l) => l.input),
      { maxPerKey: ctx.settings.MEMORY_MAX_PER_KEY, evict: false },
      Date.now(),
    );
    for (const result of outcome.results) {
      tally[result.status]++;
      if (result.status !== 'unchanged' && result.memory.embeddingStatus === 'pending') pending++;
    }
    if (!outcome.refused) return null;
    const at = lines[outcome.refused.index]!.line;
    return `line ${at}: the key holds MEMORY_MAX_PER_KEY (${ctx.settings.MEMORY_MAX_PER_KEY}) memories and an import never evicts; the import stopped here, lines from ${at} on were not imported (raise MEMORY_MAX_PER_KEY or delete memories, then run it again)`;
  };

  try {
    const reader = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
    let number = 0;
    for await (const text of reader) {
      number++;
      if (text.trim() === '') continue;
      const parsed = parse(text, Date.now());
      if ('problem' in parsed) {
        tally.bad++;
        progress.note(
          `line ${number}: ${parsed.problem}; ${options.strict ? 'stopped (--strict)' : 'skipped'}`,
        );
        if (options.strict) {
          stopped = (await flush()) ?? `the import stopped at line ${number} (--strict)`;
          break;
        }
        continue;
      }
      batch.push({ line: number, input: parsed.input });
      if (batch.length >= IMPORT_BATCH) {
        stopped = await flush();
        progress.update(number);
        if (stopped) break;
      }
    }
    reader.close();
    stopped ??= await flush();
    if (!stopped) progress.update(total);
  } finally {
    progress.finish();
  }
  return { stopped, pending };
}

export async function importMemories(
  file: string,
  options: { key: string; strict?: boolean },
  ctx: TransferContext,
): Promise<{ store: MemoryStore; pending: number } | null> {
  let total: number;
  try {
    total = await countLines(file);
  } catch (error) {
    console.error(`cannot read ${file}: ${(error as Error).message}`);
    process.exitCode = 1;
    return null;
  }
  const refused = await checkKey(ctx, options.key, true);
  if (refused) {
    console.error(refused);
    process.exitCode = 1;
    return null;
  }
  const store = ctx.openStore();
  const tally: Tally = { created: 0, updated: 0, unchanged: 0, bad: 0 };
  const started = performance.now();
  let outcome: { stopped: string | null; pending: number };
  try {
    outcome = await writeLines(file, total, options, ctx, store, tally);
  } catch (error) {
    await store.close();
    throw error;
  }
  const { stopped, pending } = outcome;
  const seconds = Math.max((performance.now() - started) / 1000, 1e-3);
  const written = tally.created + tally.updated + tally.unchanged;
  if (stopped) console.error(stopped);
  console.log(
    `${stopped ? 'stopped after importing' : 'imported'} ${written} memories into ${options.key} in ${seconds.toFixed(2)} s (${Math.round(written / seconds)} memories/s): ${tally.created} created, ${tally.updated} updated, ${tally.unchanged} unchanged; ${tally.bad} bad ${tally.bad === 1 ? 'line' : 'lines'} skipped`,
  );
  process.exitCode = stopped ? 1 : tally.bad > 0 ? SOME_LINES_SKIPPED : 0;
  return { store, pending };
}

export async function exportMemories(
  options: { key: string; out?: string; namespace?: string },
  ctx: TransferContext,
): Promise<void> {
  const refused = await checkKey(ctx, options.key, false);
  if (refused) {
    console.error(refused);
    process.exitCode = 1;
    return;
  }
  const store = ctx.openStore();
  // Into a side file first: an export that fails half-way never looks like a complete one.
  const partial = options.out ? `${options.out}.partial` : null;
  const out = partial ? createWriteStream(partial) : process.stdout;
  try {
    const now = Date.now();
    const stats = await store.stats(options.key, now);
    const total = options.namespace === undefined ? stats.count : (stats.byNamespace[options.namespace] ?? 0);
    const progress = new Progress('exporting', total);
    let cursor: string | undefined;
    let exported = 0;
    do {
      const page = await store.export(
        options.key,
        {
          limit: 1000,
          maxBytes: 8_000_000,
          ...(cursor ? { cursor } : {}),
          ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
        },
        now,
      );
      const chunk = page.memories.map((memory) => `${exportLine(memory)}\n`).join('');
      if (!out.write(chunk)) await once(out, 'drain');
      exported += page.memories.length;
      progress.update(exported);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    progress.finish();
    if (partial && options.out) {
      out.end();
      await once(out, 'finish');
      await rename(partial, options.out);
    }
    console.error(
      `exported ${exported} memories of ${options.key}${options.out ? ` to ${options.out}` : ''}`,
    );
  } catch (error) {
    if (partial) {
      out.destroy();
      await rm(partial, { force: true });
    }
    throw error;
  } finally {
    await store.close();
  }
}
