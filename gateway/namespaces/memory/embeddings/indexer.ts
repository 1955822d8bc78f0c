import type { Logger } from 'pino';
import type { MemoryStore } from '../store/types.ts';
import { type Embedder, EmbedderUnavailable } from './embedder.ts';

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
    },
  ) {
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
    while (!this.closed) {
      const known = this.embedder.model;
      if (known && !(await this.adopt(known))) return;
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
