import type Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import {
  openSqlite,
  runSqliteMigrations,
  type SqliteDatabase,
  startWalCheckpointer,
  type WalCheckpointer,
} from '../../../store/index.ts';
import { type MemoryRow, pageBySize, storedMemory, toRecord } from './common.ts';
import { CURSOR_SECRET_SETTING, CursorSeal, newCursorSecret } from './cursor.ts';
import { SqliteBitIndex } from './sqlite-bit-index.ts';
import { DocumentFrequencies } from './sqlite-df-cache.ts';
import { sqliteFilter } from './sqlite-filter.ts';
import { MERGE_STEP_SQL, registerMemoryFunctions } from './sqlite-fts.ts';
import { ROW_COLUMNS, rowOf, rowsOf } from './sqlite-rows.ts';
import { SQLITE_MIGRATIONS } from './sqlite-schema.ts';
import { sqliteSearch } from './sqlite-search.ts';
import { supersedeSimilarRows } from './sqlite-supersede.ts';
import { SqliteVectorSpace } from './sqlite-vectors.ts';
import { SqliteWriteStatements } from './sqlite-write.ts';
import { SqliteWriteGroup } from './sqlite-write-group.ts';
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
import { autoSupersedeOrder, newBatchState, planUpdate, planWrite, runWritePlan } from './write-plan.ts';

/** One text, made once: a statement's cache key is hashed on lookup, and a new string would be hashed every time. */
const ROW_BY_ID = `SELECT ${ROW_COLUMNS} FROM memories m WHERE m.public_id = ? AND m.api_key_id = ? AND (m.expires_at IS NULL OR m.expires_at > ?)`;

export const DEFAULT_VECTOR_CACHE_BYTES = 512 * 1024 * 1024;

/**
 * The embedded store: one SQLite file under DATA_DIR. Each gateway thread or process
 * opens its own connection; every write runs in an IMMEDIATE transaction, so the
 * read-check-write steps (upsert, dedup, cap) are atomic across all of them.
 */
export class SqliteMemoryStore implements MemoryStore {
  readonly engine = 'sqlite' as const;
  private readonly db: SqliteDatabase;
  private readonly statements = new Map<string, Database.Statement<unknown[]>>();
  private readonly vectors: SqliteVectorSpace;
  private readonly bitIndex: SqliteBitIndex;
  private readonly frequencies: DocumentFrequencies;
  private readonly checkpointer: WalCheckpointer | null;
  private readonly writes: SqliteWriteGroup;
  private cursorSeal: CursorSeal | null = null;

  /** `vectorCacheBytes` bounds the in-memory copy of sign bits (see sqlite-bit-index.ts). */
  constructor(file: string, options: { vectorCacheBytes?: number } = {}) {
    this.db = openSqlite(file);
    sqliteVec.load(this.db);
    registerMemoryFunctions(this.db);
    runSqliteMigrations(this.db, 'memory', SQLITE_MIGRATIONS);
    this.bitIndex = new SqliteBitIndex(
      this.db,
      (sql) => this.st(sql),
      options.vectorCacheBytes ?? DEFAULT_VECTOR_CACHE_BYTES,
    );
    this.vectors = new SqliteVectorSpace(
      this.db,
      (sql) => this.st(sql),
      () => this.bitIndex.clear(),
    );
    this.frequencies = new DocumentFrequencies(this.db, (sql) => this.st(sql));
    this.checkpointer = file === ':memory:' ? null : startWalCheckpointer(this.db, file);
    const mergeStep = this.db.prepare(MERGE_STEP_SQL);
    this.writes = new SqliteWriteGroup(this.db, () => mergeStep.run());
  }

  /** A cached statement; with `arrays` its rows come as arrays (see sqlite-rows.ts), and its SQL is read only so. */
  private st(sql: string, arrays = false): Database.Statement<unknown[]> {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare<unknown[]>(sql);
      // raw() is refused on a statement that returns no rows (an INSERT): asked only for reads.
      if (arrays) statement.raw(true);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private raw(sql: string): Database.Statement<unknown[]> {
    return this.st(sql, true);
  }

  /** Made on the first cursor: the first connection to need one stores the secret for all. */
  private get cursors(): CursorSeal {
    if (!this.cursorSeal) {
      this.st('INSERT OR IGNORE INTO memory_settings (name, value) VALUES (?, ?)').run(
        CURSOR_SECRET_SETTING,
        newCursorSecret(),
      );
      const { value } = this.st('SELECT value FROM memory_settings WHERE name = ?').get(
        CURSOR_SECRET_SETTING,
      ) as { value: string };
      this.cursorSeal = new CursorSeal(value);
    }
    return this.cursorSeal;
  }

  private row(apiKeyId: string, id: string, now: number): MemoryRow | undefined {
    const values = this.raw(ROW_BY_ID).get(id, apiKeyId, now) as unknown[] | undefined;
    return values && rowOf(values);
  }

  /** Answers once the row is committed, together with the other writes of this turn. */
  write(apiKeyId: string, input: WriteInput, maxPerKey: number, now: number): Promise<WriteResult> {
    return this.writes.run(() =>
      runWritePlan(
        planWrite(input, maxPerKey),
        new SqliteWriteStatements((sql) => this.st(sql), apiKeyId, now),
      ),
    );
  }

  /** One job of the write group: the batch commits with whatever else this turn wrote. */
  writeMany(
    apiKeyId: string,
    inputs: WriteInput[],
    options: { maxPerKey: number; evict: boolean },
    now: number,
  ): Promise<WriteManyOutcome> {
    return this.writes.run(() => {
      const statements = new SqliteWriteStatements((sql) => this.st(sql), apiKeyId, now);
      const batch = newBatchState();
      const results: WriteResult[] = [];
      for (const [index, input] of inputs.entries()) {
        try {
          results.push(runWritePlan(planWrite(input, options.maxPerKey, { ...options, batch }), statements));
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
    const row = this.row(apiKeyId, id, now);
    return row ? toRecord(row) : null;
  }

  async update(apiKeyId: string, id: string, patch: UpdatePatch, now: number): Promise<MemoryRecord | null> {
    const run = this.db.transaction((): MemoryRecord | null => {
      const row = this.row(apiKeyId, id, now);
      if (!row) return null;
      const { namespace, values, reembed } = planUpdate(storedMemory(row), patch);
      const statements = new SqliteWriteStatements((sql) => this.st(sql), apiKeyId, now);
      return statements.rewrite(row.id, namespace, values, reembed);
    });
    return run.immediate();
  }

  async delete(apiKeyId: string, id: string, now: number): Promise<boolean> {
    const result = this.st(
      'DELETE FROM memories WHERE public_id = ? AND api_key_id = ? AND (expires_at IS NULL OR expires_at > ?)',
    ).run(id, apiKeyId, now);
    return result.changes > 0;
  }

  async list(
    apiKeyId: string,
    filter: MemoryFilter,
    page: Page,
    now: number,
  ): Promise<{ memories: MemoryRecord[]; nextCursor: string | null }> {
    const where = sqliteFilter(apiKeyId, filter, now);
    const newest = (page.order ?? 'newest') === 'newest';
    let after = '';
    if (page.cursor) {
      const [, pinned, occurred, id] = this.cursors.open(apiKeyId, page.cursor, newest ? 'n' : 'o', 4);
      Object.assign(where.params, { cp: pinned, co: occurred, ci: id });
      after = newest
        ? ' AND (m.pinned, m.occurred_at, m.id) < (@cp, @co, @ci)'
        : ' AND (m.occurred_at, m.id) > (@co, @ci)';
    }
    // Event order (see eventOrder in common.ts): the row id is the write sequence.
    const order = newest ? 'm.pinned DESC, m.occurred_at DESC, m.id DESC' : 'm.occurred_at, m.id';
    const rows = rowsOf(
      this.raw(
        `SELECT ${ROW_COLUMNS} FROM memories m WHERE ${where.sql}${after} ORDER BY ${order} LIMIT @limit`,
      ).all({ ...where.params, limit: page.limit + 1 }) as unknown[][],
    );
    const more = rows.length > page.limit;
    const shown = rows.slice(0, page.limit);
    const last = shown.at(-1);
    return {
      memories: shown.map(toRecord),
      nextCursor:
        more && last
          ? this.cursors.seal(apiKeyId, [newest ? 'n' : 'o', Number(last.pinned), last.occurred_at, last.id])
          : null,
    };
  }

  async deleteMany(
    apiKeyId: string,
    target: { ids: string[] } | { filter: MemoryFilter },
    options: { dryRun: boolean; includePinned: boolean },
    now: number,
  ): Promise<{ matched: number; deleted: number; ids: string[] }> {
    const run = this.db.transaction(() => {
      let where: { sql: string; params: Record<string, unknown> };
      if ('ids' in target) {
        where = sqliteFilter(apiKeyId, {}, now);
        where.sql += ` AND m.public_id IN (SELECT value FROM json_each(@ids))`;
        where.params.ids = JSON.stringify(target.ids);
      } else {
        where = sqliteFilter(apiKeyId, target.filter, now);
      }
      if (!options.includePinned) where.sql += ' AND m.pinned = 0';
      const rows = this.st(`SELECT m.id, m.public_id FROM memories m WHERE ${where.sql} ORDER BY m.id`).all(
        where.params,
      ) as { id: number; public_id: string }[];
      if (!options.dryRun) {
        const remove = this.st('DELETE FROM memories WHERE id = ?');
        for (const row of rows) remove.run(row.id);
      }
      return {
        matched: rows.length,
        deleted: options.dryRun ? 0 : rows.length,
        ids: rows.slice(0, 100).map((row) => row.public_id),
      };
    });
    return run.immediate();
  }

  async export(
    apiKeyId: string,
    options: { namespace?: string; cursor?: string; limit: number; maxBytes: number },
    now: number,
  ): Promise<{ memories: MemoryRecord[]; nextCursor: string | null }> {
    const where = sqliteFilter(
      apiKeyId,
      options.namespace === undefined ? {} : { namespace: options.namespace },
      now,
    );
    const afterId = options.cursor ? Number(this.cursors.open(apiKeyId, options.cursor, 'x', 2)[1]) : 0;
    const rows = this.st(
      `SELECT m.* FROM memories m WHERE ${where.sql} AND m.id > @after ORDER BY m.id LIMIT @limit`,
    ).all({ ...where.params, after: afterId, limit: options.limit + 1 }) as MemoryRow[];
    return pageBySize(rows, options.limit, options.maxBytes, (parts) => this.cursors.seal(apiKeyId, parts));
  }

  async pendingEmbeddingCount(): Promise<number> {
    const row = this.st(`SELECT COUNT(*) AS n FROM memories WHERE embedding_status = 'pending'`).get() as {
      n: number;
    };
    return Number(row.n);
  }

  async stats(apiKeyId: string, now: number): Promise<MemoryStats> {
    const live = 'api_key_id = ? AND (expires_at IS NULL OR expires_at > ?)';
    const totals = this.st(
      `SELECT COUNT(*) AS count, COALESCE(SUM(pinned), 0) AS pinned,
         COALESCE(SUM(embedding_status = 'pending'), 0) AS pending, COALESCE(SUM(embedding_status = 'failed'), 0) AS failed,
         MIN(created_at) AS oldest, MAX(created_at) AS newest FROM memories WHERE ${live}`,
    ).get(apiKeyId, now) as Record<string, number | null>;
    const spaces = this.st(
      `SELECT namespace, COUNT(*) AS n FROM memories WHERE ${live} GROUP BY namespace`,
    ).all(apiKeyId, now) as { namespace: string; n: number }[];
    return {
      count: Number(totals.count),
      byNamespace: Object.fromEntries(spaces.map((s) => [s.namespace, s.n])),
      pinned: Number(totals.pinned),
      pendingEmbeddings: Number(totals.pending),
      failedEmbeddings: Number(totals.failed),
      oldestAt: totals.oldest ?? null,
      newestAt: totals.newest ?? null,
    };
  }

  async search(apiKeyId: string, request: SearchRequest, now: number): Promise<SearchCandidates> {
    return sqliteSearch(
      (sql) => this.st(sql),
      this.vectors.ready ? this.bitIndex : null,
      this.frequencies,
      apiKeyId,
      request,
      now,
    );
  }

  async supersedeSimilar(rowIds: number[], minSimilarity: number): Promise<number> {
    const order = autoSupersedeOrder(rowIds, minSimilarity);
    if (order.length === 0 || !this.vectors.ready) return 0;
    return supersedeSimilarRows(this.db, (sql) => this.st(sql), this.bitIndex, order, minSimilarity);
  }

  async embeddingModel(): Promise<EmbeddingModelInfo | null> {
    return this.vectors.model();
  }

  async adoptEmbeddingModel(info: EmbeddingModelInfo): Promise<boolean> {
    return this.vectors.adopt(info);
  }

  async resetEmbeddings(info: EmbeddingModelInfo): Promise<number> {
    return this.vectors.reset(info);
  }

  async pendingEmbeddings(limit: number, afterRowId: number): Promise<PendingEmbedding[]> {
    return this.vectors.pending(limit, afterRowId);
  }

  async setEmbedding(rowId: number, hash: string, vector: Float32Array): Promise<boolean> {
    return this.vectors.set(rowId, hash, vector);
  }

  async markEmbeddingFailed(rowId: number, hash: string): Promise<void> {
    this.vectors.markFailed(rowId, hash);
  }

  async storeEmbeddings(outcomes: PendingOutcome[]): Promise<number> {
    return this.vectors.storeBatch(outcomes);
  }

  async purgeExpired(now: number): Promise<number> {
    return this.st('DELETE FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ?').run(now).changes;
  }

  async close(): Promise<void> {
    this.writes.flush();
    await this.checkpointer?.stop();
    this.db.close();
  }
}
