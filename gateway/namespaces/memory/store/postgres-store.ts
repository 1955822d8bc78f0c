import {
  createPgPool,
  type PgClient,
  type PgPool,
  runPgMigrations,
  withPgTransaction,
} from '../../../store/index.ts';
import { type MemoryRow, pageBySize, storedMemory, toRecord } from './common.ts';
import { CURSOR_SECRET_SETTING, CursorSeal, newCursorSecret } from './cursor.ts';
import { indexedRemaining, type KeyIndexLog, PgKeyIndexes } from './postgres-key-index.ts';
import { checkPgvector } from './postgres-pgvector.ts';
import { PG_MIGRATIONS, pgFilter } from './postgres-schema.ts';
import { PG_SESSION_SETTINGS, type PgAccess, pgSearch } from './postgres-search.ts';
import { pgSupersedeSimilar, RowKeys } from './postgres-supersede.ts';
import { PgVectorSpace } from './postgres-vectors.ts';
import { PgWriteStatements } from './postgres-write.ts';
import type {
  EmbeddingModelInfo,
  MemoryFilter,
  MemoryRecord,
  MemoryStats,
  MemoryStore,
  Page,
  PendingEmbedding,
  PendingOutcome,
  SearchCandidates,
  SearchRequest,
  UpdatePatch,
  WriteInput,
  WriteManyOutcome,
  WriteResult,
} from './types.ts';
import { refusal } from './types.ts';
import { BatchLookups } from './write-batch.ts';
import { autoSupersedeOrder, newBatchState, planUpdate, planWrite, runWritePlanAsync } from './write-plan.ts';

/**
 * The store's connections: every one carries the session settings from its startup on.
 * Far above a search or write at 100k memories a key (tens of ms), the query timeout is
 * reached only by a server that stopped answering; the call then answers STORE_UNAVAILABLE.
 */
export function memoryPgPool(url: string, max: number): PgPool {
  return createPgPool(url, { max, queryTimeoutMs: 30_000, settings: PG_SESSION_SETTINGS });
}

export interface PgStoreOptions {
  max?: number;
  /** A key with this many live memories gets its own partial HNSW index; 0: never. */
  keyIndexMinVectors?: number;
  /** How long supersession trusts the per-key indexes it last saw (KEY_INDEX_RECHECK_MS). */
  keyIndexRecheckMs?: number;
  log?: KeyIndexLog;
}

/**
 * The scale-out store: Postgres + pgvector via DATABASE_URL. Writes of one key are
 * serialised by a transaction-scoped advisory lock on the key, which makes upsert, dedup
 * and the cap atomic across every gateway sharing the server.
 */
export class PostgresMemoryStore implements MemoryStore {
  readonly engine = 'postgres' as const;
  private readonly pool: PgPool;
  private ready: Promise<void> | null = null;
  private readonly access: PgAccess = {
    q: (sql, params) => this.q(sql, params),
    tx: (apiKeyId, fn) => this.tx(apiKeyId, fn),
  };
  private readonly vectors = new PgVectorSpace(this.access);
  private cursorSeal: Promise<CursorSeal> | null = null;
  /** Per-key partial HNSW indexes (decision 1103). */
  readonly keyIndexes: PgKeyIndexes;
  /** Keys of rows whose vectors this store wrote, for their supersession (decision 1104). */
  private readonly rowKeys = new RowKeys();

  constructor(url: string, options: PgStoreOptions = {}) {
    this.pool = memoryPgPool(url, options.max ?? 10);
    this.keyIndexes = new PgKeyIndexes(
      url,
      options.keyIndexMinVectors,
      options.log,
      options.keyIndexRecheckMs,
    );
  }

  /**
   * Checks pgvector and migrates on first use; a failure (server down, no pgvector) is retried
   * by the next call, so a fixed server is used without a restart.
   */
  private init(): Promise<void> {
    this.ready ??= checkPgvector(this.pool)
      .then(() => runPgMigrations(this.pool, 'memory', PG_MIGRATIONS))
      .then(
        () => {},
        (error: unknown) => {
          this.ready = null;
          throw error;
        },
      );
    return this.ready;
  }

  /** Made on the first cursor: the first gateway to need one stores the secret for all. */
  private cursors(): Promise<CursorSeal> {
    this.cursorSeal ??= (async () => {
      await this.q(
        'INSERT INTO memory_settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING',
        [CURSOR_SECRET_SETTING, newCursorSecret()],
      );
      const [row] = await this.q<{ value: string }>('SELECT value FROM memory_settings WHERE name = $1', [
        CURSOR_SECRET_SETTING,
      ]);
      return new CursorSeal(row!.value);
    })().catch((error: unknown) => {
      this.cursorSeal = null;
      throw error;
    });
    return this.cursorSeal;
  }

  private async q<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    await this.init();
    return (await this.pool.query(sql, params)).rows as T[];
  }

  private async tx<T>(apiKeyId: string | null, fn: (c: PgClient) => Promise<T>): Promise<T> {
    await this.init();
    return withPgTransaction(this.pool, async (client) => {
      if (apiKeyId !== null)
        await client.query("SELECT pg_advisory_xact_lock(hashtext('memory:' || $1))", [apiKeyId]);
      return fn(client);
    });
  }

  async write(apiKeyId: string, input: WriteInput, maxPerKey: number, now: number): Promise<WriteResult> {
    return this.tx(apiKeyId, (c) =>
      runWritePlanAsync(planWrite(input, maxPerKey), new PgWriteStatements(c, apiKeyId, now)),
    );
  }

  async writeMany(
    apiKeyId: string,
    inputs: WriteInput[],
    options: { maxPerKey: number; evict: boolean },
    now: number,
  ): Promise<WriteManyOutcome> {
    return this.tx(apiKeyId, async (c) => {
      const direct = new PgWriteStatements(c, apiKeyId, now);
      await direct.purgeExpired();
      const batch = { ...newBatchState(), purged: true };
      const { keys, hashes } = BatchLookups.wanted(inputs);
      const found = await c.query(
        `SELECT * FROM memories WHERE api_key_id = $1 AND (
           (namespace, key) IN (SELECT * FROM unnest($2::text[], $3::text[]))
           OR (namespace, content_hash) IN (SELECT * FROM unnest($4::text[], $5::text[])))`,
        [
          apiKeyId,
          keys.map((k) => k[0]),
          keys.map((k) => k[1]),
          hashes.map((h) => h[0]),
          hashes.map((h) => h[1]),
        ],
      );
      const statements = new BatchLookups(
        inputs,
        (found.rows as MemoryRow[]).map((row) => storedMemory(row)),
      ).wrap(direct);
      const results: WriteResult[] = [];
      for (const [index, input] of inputs.entries()) {
        try {
          results.push(
            await runWritePlanAsync(planWrite(input, options.maxPerKey, { ...options, batch }), statements),
          );
        } catch (error) {
          // A refusal is decided before the write changes anything; the rows before it stand.
          const refused = refusal(error);
          if (!refused) throw error;
          return { results, refused: { index, error: refused } };
        }
      }
      return { results, refused: null };
    });
  }

  async get(apiKeyId: string, id: string, now: number): Promise<MemoryRecord | null> {
    const rows = await this.q<MemoryRow>(
      'SELECT * FROM memories WHERE public_id = $1 AND api_key_id = $2 AND (expires_at IS NULL OR expires_at > $3)',
      [id, apiKeyId, now],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async update(apiKeyId: string, id: string, patch: UpdatePatch, now: number): Promise<MemoryRecord | null> {
    return this.tx(apiKeyId, async (c) => {
      const row = (
        await c.query(
          'SELECT * FROM memories WHERE public_id = $1 AND api_key_id = $2 AND (expires_at IS NULL OR expires_at > $3) FOR UPDATE',
          [id, apiKeyId, now],
        )
      ).rows[0] as MemoryRow | undefined;
      if (!row) return null;
      const { namespace, values, reembed } = planUpdate(storedMemory(row), patch);
      return new PgWriteStatements(c, apiKeyId, now).rewrite(Number(row.id), namespace, values, reembed);
    });
  }

  async delete(apiKeyId: string, id: string, now: number): Promise<boolean> {
    const rows = await this.q(
      'DELETE FROM memories WHERE public_id = $1 AND api_key_id = $2 AND (expires_at IS NULL OR expires_at > $3) RETURNING id',
      [id, apiKeyId, now],
    );
    return rows.length > 0;
  }

  async list(apiKeyId: string, filter: MemoryFilter, page: Page, now: number) {
    const params: unknown[] = [];
    let where = pgFilter(apiKeyId, filter, now, params);
    const newest = (page.order ?? 'newest') === 'newest';
    const cursors = await this.cursors();
    if (page.cursor) {
      const [, pinned, occurred, id] = cursors.open(apiKeyId, page.cursor, newest ? 'n' : 'o', 4);
      if (newest) params.push(Boolean(pinned));
      params.push(occurred, id);
      const n = params.length;
      where += newest
        ? ` AND (m.pinned, m.occurred_at, m.id) < ($${n - 2}::boolean, $${n - 1}::bigint, $${n}::bigint)`
        : ` AND (m.occurred_at, m.id) > ($${n - 1}::bigint, $${n}::bigint)`;
    }
    params.push(page.limit + 1);
    // Event order (see eventOrder in common.ts): the row id is the write sequence.
    const order = newest ? 'm.pinned DESC, m.occurred_at DESC, m.id DESC' : 'm.occurred_at, m.id';
    const rows = await this.q<MemoryRow>(
      `SELECT m.* FROM memories m WHERE ${where} ORDER BY ${order} LIMIT $${params.length}`,
      params,
    );
    const shown = rows.slice(0, page.limit);
    const last = shown.at(-1);
    return {
      memories: shown.map(toRecord),
      nextCursor:
        rows.length > page.limit && last
          ? cursors.seal(apiKeyId, [
              newest ? 'n' : 'o',
              last.pinned ? 1 : 0,
              Number(last.occurred_at),
              Number(last.id),
            ])
          : null,
    };
  }

  async deleteMany(
    apiKeyId: string,
    target: { ids: string[] } | { filter: MemoryFilter },
    options: { dryRun: boolean; includePinned: boolean },
    now: number,
  ) {
    let shrunk = null as number | null;
    const result = await this.tx(apiKeyId, async (c) => {
      const params: unknown[] = [];
      let where = pgFilter(apiKeyId, 'ids' in target ? {} : target.filter, now, params);
      if ('ids' in target) {
        params.push(target.ids);
        where += ` AND m.public_id::text = ANY($${params.length}::text[])`;
      }
      if (!options.includePinned) where += ' AND NOT m.pinned';
      const rows = (
        await c.query(`SELECT m.id, m.public_id FROM memories m WHERE ${where} ORDER BY m.id`, params)
      ).rows as { id: string; public_id: string }[];
      if (!options.dryRun && rows.length > 0) {
        await c.query('DELETE FROM memories WHERE id = ANY($1::bigint[])', [rows.map((r) => r.id)]);
        shrunk = await indexedRemaining(c, apiKeyId);
      }
      return {
        matched: rows.length,
        deleted: options.dryRun ? 0 : rows.length,
        ids: rows.slice(0, 100).map((r) => r.public_id),
      };
    });
    // In the background: a drop waits for the searches under way on the table.
    if (shrunk !== null) void this.keyIndexes.shrank(apiKeyId, shrunk);
    return result;
  }

  async export(
    apiKeyId: string,
    options: { namespace?: string; cursor?: string; limit: number; maxBytes: number },
    now: number,
  ) {
    const params: unknown[] = [];
    const where = pgFilter(
      apiKeyId,
      options.namespace === undefined ? {} : { namespace: options.namespace },
      now,
      params,
    );
    const cursors = await this.cursors();
    const after = options.cursor ? Number(cursors.open(apiKeyId, options.cursor, 'x', 2)[1]) : 0;
    params.push(after, options.limit + 1);
    const rows = await this.q<MemoryRow>(
      `SELECT m.* FROM memories m WHERE ${where} AND m.id > $${params.length - 1} ORDER BY m.id LIMIT $${params.length}`,
      params,
    );
    return pageBySize(rows, options.limit, options.maxBytes, (parts) => cursors.seal(apiKeyId, parts));
  }

  async pendingEmbeddingCount(): Promise<number> {
    const [row] = await this.q<{ n: number }>(
      `SELECT COUNT(*)::int AS n FROM memories WHERE embedding_status = 'pending'`,
      [],
    );
    return Number(row!.n);
  }

  async stats(apiKeyId: string, now: number): Promise<MemoryStats> {
    const live = 'api_key_id = $1 AND (expires_at IS NULL OR expires_at > $2)';
    const [totals] = await this.q<Record<string, string | number | null>>(
      `SELECT COUNT(*)::int AS count, COUNT(*) FILTER (WHERE pinned)::int AS pinned,
         COUNT(*) FILTER (WHERE embedding_status = 'pending')::int AS pending,
         COUNT(*) FILTER (WHERE embedding_status = 'failed')::int AS failed,
         MIN(created_at) AS oldest, MAX(created_at) AS newest FROM memories WHERE ${live}`,
      [apiKeyId, now],
    );
    const spaces = await this.q<{ namespace: string; n: number }>(
      `SELECT namespace, COUNT(*)::int AS n FROM memories WHERE ${live} GROUP BY namespace`,
      [apiKeyId, now],
    );
    return {
      count: Number(totals!.count),
      byNamespace: Object.fromEntries(spaces.map((s) => [s.namespace, s.n])),
      pinned: Number(totals!.pinned),
      pendingEmbeddings: Number(totals!.pending),
      failedEmbeddings: Number(totals!.failed),
      oldestAt: totals!.oldest === null ? null : Number(totals!.oldest),
      newestAt: totals!.newest === null ? null : Number(totals!.newest),
    };
  }

  async search(apiKeyId: string, request: SearchRequest, now: number): Promise<SearchCandidates> {
    const found = await pgSearch(this.access, apiKeyId, request, now);
    this.keyIndexes.notice(apiKeyId, found.total);
    return found;
  }

  async supersedeSimilar(rowIds: number[], minSimilarity: number): Promise<number> {
    const known = this.rowKeys.take(rowIds);
    const order = autoSupersedeOrder(rowIds, minSimilarity);
    if (order.length === 0) return 0;
    return pgSupersedeSimilar(this.access, order, minSimilarity, this.keyIndexes.valid, known);
  }

  async embeddingModel(): Promise<EmbeddingModelInfo | null> {
    return this.vectors.model();
  }

  async adoptEmbeddingModel(info: EmbeddingModelInfo): Promise<boolean> {
    return this.vectors.adopt(info);
  }

  async resetEmbeddings(info: EmbeddingModelInfo): Promise<number> {
    const pending = await this.vectors.reset(info);
    // The vector table was dropped with every key's index.
    this.keyIndexes.valid.clear();
    return pending;
  }

  async pendingEmbeddings(limit: number, afterRowId: number): Promise<PendingEmbedding[]> {
    return this.vectors.pending(limit, afterRowId);
  }

  async setEmbedding(rowId: number, hash: string, vector: Float32Array): Promise<boolean> {
    const apiKeyId = await this.vectors.set(rowId, hash, vector);
    if (apiKeyId === null) return false;
    this.rowKeys.note(rowId, apiKeyId);
    return true;
  }

  async markEmbeddingFailed(rowId: number, hash: string): Promise<void> {
    return this.vectors.markFailed(rowId, hash);
  }

  async storeEmbeddings(outcomes: PendingOutcome[]): Promise<number> {
    // Row by row: each is a round trip on a pooled connection, nothing blocks the request thread.
    let stored = 0;
    for (const { rowId, contentHash, vector } of outcomes) {
      if (vector === null) await this.vectors.markFailed(rowId, contentHash);
      else if (await this.setEmbedding(rowId, contentHash, vector)) stored++;
    }
    return stored;
  }

  async purgeExpired(now: number): Promise<number> {
    return (
      await this.q('DELETE FROM memories WHERE expires_at IS NOT NULL AND expires_at <= $1 RETURNING id', [
        now,
      ])
    ).length;
  }

  async close(): Promise<void> {
    await this.keyIndexes.close((pid) => this.pool.query('SELECT pg_cancel_backend($1)', [pid]));
    await this.pool.end();
  }
}
