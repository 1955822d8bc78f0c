import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { MemoryStore } from '../store/types.ts';
import { type Embedder, EmbedderUnavailable } from './embedder.ts';

/**
 * How the indexer stands aside during a burst of writes. Embedding CPU cannot be kept off
 * the request thread's cores by the embedding thread's nice value alone: in a profile under
 * c16 writes, most of it ran on V8's shared platform threads (the worker's JIT and GC) and
 * the model runtime's helpers, all at the process's priority. So no batch starts while more
 * than `busyWrites` writes arrive per `windowMs`; `calmWindows` quieter windows in a row end
 * the wait (a write followed by a short lull is often the start of a burst, and the first
 * batch after start-up loads the model: seconds of CPU that cannot be stopped once begun).
 * A pass of the indexer stands aside for at most `maxMs` in all, then embeds its backlog
 * without waiting again: a load that never pauses delays vectors by `maxMs` once, instead
 * of being held to one batch per `maxMs` while the backlog grows. Rows left pending are
 * keyword-searchable meanwhile.
 */
export interface BurstYield {
  windowMs: number;
  busyWrites: number;
  calmWindows: number;
  maxMs: number;
}

/** 8 writes per 100 ms is 80 a second: a trickle of agent writes waits 300 ms at most. */
export const DEFAULT_BURST_YIELD: BurstYield = {
  windowMs: 100,
  busyWrites: 8,
  calmWindows: 3,
  maxMs: 10_000,
};

/**
 * Embeds pending memories in the background. A write answers once its row is committed
 * (keyword-searchable at once); the vector lands here and `embedding_status` turns ready.
 * A store that holds another model's vectors is left untouched until it is re-embedded.
 */
export class EmbeddingIndexer {
  private draining: Promise<void> | null = null;
  private again = false;
  private closed = false;
  private readonly timer: NodeJS.Timeout;
  /** Writes seen since the indexer last looked, and when the latest came (see afterBurst). */
  private writes = 0;
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  private readonly burst: BurstYield;
  /** Why vectors cannot be used at the moment; null when they can. */
  mismatch: string | null = null;
  lastError: string | null = null;

  constructor(
    private readonly store: MemoryStore,
    private readonly embedder: Embedder,
    private readonly log: Logger,
    private readonly options: {
      batchSize: number;
      retryMs: number;
      supersedeAbove?: number;
      /** Told how many rows each stored batch held (the re-embed command's progress line). */
      onStored?: (rows: number) => void;
      burst?: BurstYield;
    },
  ) {
    this.burst = options.burst ?? DEFAULT_BURST_YIELD;
    // Picks up rows left pending by a restart, a transient provider failure or another process.
    this.timer = setInterval(() => this.kick(), options.retryMs);
    this.timer.unref();
  }

  kick(): void {
    if (this.closed || !this.embedder.enabled) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain()
      .catch((error: unknown) => {
        this.lastError = (error as Error).message;
        this.log.warn({ err: error }, 'memory embedding pass failed');
      })
      .finally(() => {
        this.draining = null;
        if (this.again && !this.closed) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** A write left a row pending: embed it once the burst it belongs to has passed. */
  written(): void {
    this.writes++;
    this.lastWriteAt = Date.now();
    this.kick();
  }

  /** Waits while writes arrive in a burst (see BurstYield), until `until` at the latest. */
  private async afterBurst(until: number): Promise<void> {
    const { windowMs, busyWrites, calmWindows } = this.burst;
    // No write for that long: nothing to wait for (the re-embed command never waits).
    if (Date.now() - this.lastWriteAt >= calmWindows * windowMs) return;
    let calm = 0;
    this.writes = 0;
    while (!this.closed && calm < calmWindows && Date.now() < until) {
      // Held by the event loop (not unref'd): close() waits for this pass, at most one window.
      await sleep(Math.max(1, Math.min(windowMs, until - Date.now())));
      calm = this.writes > busyWrites ? 0 : calm + 1;
      this.writes = 0;
    }
  }

  /** Resolves when no pass is running (tests and the re-embed command wait on it). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async adopt(model: { model: string; dimensions: number }): Promise<boolean> {
    if (await this.store.adoptEmbeddingModel(model)) {
      this.mismatch = null;
      return true;
    }
    const held = await this.store.embeddingModel();
    this.mismatch = `stored vectors come from ${held?.model} (${held?.dimensions} dimensions) but the configured model is ${model.model} (${model.dimensions}); run \`npm run memory -- reembed\``;
    return false;
  }

  private async drain(): Promise<void> {
    let after = 0;
    // One budget for the whole pass (see BurstYield): past it, the backlog is embedded at full speed.
    const standAsideUntil = Date.now() + this.burst.maxMs;
    while (!this.closed) {
      const known = this.embedder.model;
      if (known && !(await this.adopt(known))) return;
      await this.afterBurst(standAsideUntil);
      if (this.closed) return;
      const batch = await this.store.pendingEmbeddings(this.options.batchSize, after);
      if (batch.length === 0) return;
      after = batch.at(-1)!.rowId;
      let vectors: (Float32Array | null)[];
      try {
        vectors = await this.embedder.embed(batch.map((row) => row.content));
      } catch (error) {
        if (!(error instanceof EmbedderUnavailable) || !error.permanent) {
          this.lastError = (error as Error).message;
          return; // transient: the timer retries the same rows later
        }
        // One bad text must not fail its neighbours: retry one by one, mark only the failures.
        vectors = [];
        for (const row of batch)
          vectors.push(
            await this.embedder.embed([row.content]).then(
              (v) => v[0]!,
              () => null,
            ),
          );
      }
      this.lastError = null;
      const first = vectors.find((v) => v !== null);
      if (
        !known &&
        first &&
        !(await this.adopt({ model: this.embedder.model!.model, dimensions: first.length }))
      )
        return;
      await this.store.storeEmbeddings(
        batch.map((row, i) => ({
          rowId: row.rowId,
          contentHash: row.contentHash,
          vector: vectors[i] ?? null,
        })),
      );
      this.options.onStored?.(batch.length);
      // The automatic update rule needs the new vectors, so it runs once they are stored.
      const embedded = batch.filter((_, i) => vectors[i]).map((row) => row.rowId);
      await this.store.supersedeSimilar(embedded, this.options.supersedeAbove ?? 1);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.idle();
  }
}
