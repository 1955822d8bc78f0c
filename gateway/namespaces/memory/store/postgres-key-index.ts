import { createPgPool, type PgClient, type PgPool } from '../../../store/index.ts';
import { keyTag } from './common.ts';
import type { PgAccess } from './postgres-search.ts';

/** What the builder says in the gateway's log (a pino logger fits). */
export interface KeyIndexLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

const SILENT: KeyIndexLog = { info() {}, warn() {} };

/** Every per-key index's name starts so; the table-wide one (`memory_vectors_hnsw`) does not. */
const KEY_INDEX_PREFIX = 'memory_vectors_hnsw_';

/**
 * The key's partial index is named by a hash of the key id, as SQLite's keyword terms are
 * tagged (keyTag): catalogue listings and log lines show the tag, not the id. The id itself
 * is the index's predicate, which a partial index cannot do without.
 */
export function keyIndexName(apiKeyId: string): string {
  return `${KEY_INDEX_PREFIX}${keyTag(apiKeyId)}`;
}

/** After a bulk delete: the key's memories left, when it has its own vector index (else null). */
export async function indexedRemaining(c: PgClient, apiKeyId: string): Promise<number | null> {
  const [row] = (
    await c.query<{ indexed: boolean; n: string }>(
      `SELECT to_regclass(current_schema() || '.' || $2) IS NOT NULL AS indexed,
              (SELECT count(*) FROM memories WHERE api_key_id = $1) AS n`,
      [apiKeyId, keyIndexName(apiKeyId)],
    )
  ).rows;
  return row?.indexed ? Number(row.n) : null;
}

/** MEMORY_KEY_INDEX_VECTORS's default (decision 1103). */
export const KEY_INDEX_MIN_VECTORS = 10_000;

/**
 * One build at a time in the whole fleet: builds on one table wait on each other's lock
 * anyway. The two-int form is a lock space of its own: the store's key locks are one-int
 * hashes of `memory:` and the key id, which any string could collide with.
 */
const BUILD_LOCK = "hashtext('memory'), hashtext('key-vector-index')";
/** A key under the threshold by vectors (some still pending), or another gateway building: ask again after. */
const CHECK_AGAIN_MS = 60_000;
/**
 * A build that failed (its invalid index dropped) is tried again after; a key seen indexed
 * is looked at again after as long (a re-embed drops the vector table with its indexes).
 */
const RETRY_MS = 10 * 60_000;

/**
 * How long a gateway goes on with the per-key indexes it last saw before it reads the
 * catalogue again: the bound on how late it sees another gateway's build (its own builds,
 * drops and re-embeds it knows at once).
 */
export const KEY_INDEX_RECHECK_MS = 60_000;

/**
 * The per-key indexes that are valid, by name, as this gateway last saw them (decision
 * 1104). Supersession picks its statement by them on every write batch; asking the
 * catalogue each time was two round trips a batch, where almost every key has no index.
 * Neither statement names an index, so a belief that lags a drop elsewhere costs at most
 * the neighbours the key-index shape misses on the table-wide index, never an error.
 */
export class ValidKeyIndexes {
  private names = new Set<string>();
  /** On the monotonic clock: a wall clock stepped back would otherwise hold an old belief. */
  private readAt = Number.NEGATIVE_INFINITY;
  /** Learnt or forgotten since: a catalogue read that began before is out of date. */
  private changes = 0;
  private reading: Promise<void> | null = null;

  constructor(private readonly recheckMs: number = KEY_INDEX_RECHECK_MS) {}

  learn(apiKeyId: string): void {
    this.names.add(keyIndexName(apiKeyId));
    this.changes++;
  }

  forget(apiKeyId: string): void {
    this.names.delete(keyIndexName(apiKeyId));
    this.changes++;
  }

  /** A re-embed dropped the vector table, and every index on it. */
  clear(): void {
    this.names.clear();
    this.changes++;
  }

  /** The valid per-key indexes' names; the catalogue is read when the last read is older than the recheck. */
  async current(db: PgAccess): Promise<ReadonlySet<string>> {
    if (performance.now() - this.readAt >= this.recheckMs) {
      this.reading ??= this.read(db).finally(() => {
        this.reading = null;
      });
      await this.reading;
    }
    return this.names;
  }

  private async read(db: PgAccess): Promise<void> {
    const changes = this.changes;
    const rows = await db.q<{ name: string }>(
      `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = to_regclass('memory_vectors') AND starts_with(c.relname, $1)
          AND i.indisvalid AND i.indisready`,
      [KEY_INDEX_PREFIX],
    );
    // A build or drop of this gateway came in between: the read may predate it, so the
    // next batch reads again.
    if (changes !== this.changes) return;
    this.names = new Set(rows.map((row) => row.name));
    this.readAt = performance.now();
  }
}

export type KeyIndexOutcome = 'built' | 'present' | 'busy' | 'under' | 'most' | 'failed' | 'closed';
type KeyState = { kind: 'building' } | { kind: 'wait'; until: number };

async function indexState(client: PgClient, name: string): Promise<'valid' | 'invalid' | null> {
  const { rows } = await client.query<{ valid: boolean }>(
    `SELECT i.indisvalid AND i.indisready AS valid FROM pg_index i
      WHERE i.indexrelid = to_regclass(current_schema() || '.' || $1)`,
    [name],
  );
  if (rows.length === 0) return null;
  return rows[0]!.valid ? 'valid' : 'invalid';
}

/**
 * Per-key partial HNSW indexes on `memory_vectors` (decision 1103). Where a key is a small
 * share of a large table, the planner does not scan the table-wide HNSW index for it but
 * reads and sorts all of the key's vectors; an index holding only the key's rows is
 * walked instead. A key whose live memories reach `minVectors` gets one, built in the
 * background without blocking writes (CREATE INDEX CONCURRENTLY), by whichever gateway
 * takes the fleet's build lock first; searches use it as soon as it is valid.
 */
export class PgKeyIndexes {
  private readonly known = new Map<string, KeyState>();
  /** Builds and drops of this process, one after another. */
  private chain: Promise<unknown> = Promise.resolve();
  private buildPid: number | null = null;
  private closing = false;
  /** Which keys' indexes supersession may count on (learnt here as builds find or make them). */
  readonly valid: ValidKeyIndexes;

  constructor(
    private readonly url: string,
    /** 0: no per-key indexes are built (existing ones are still dropped when their key empties). */
    readonly minVectors: number = KEY_INDEX_MIN_VECTORS,
    private readonly log: KeyIndexLog = SILENT,
    recheckMs: number = KEY_INDEX_RECHECK_MS,
  ) {
    this.valid = new ValidKeyIndexes(recheckMs);
  }

  /** A search saw the key hold `count` live memories: starts the key's build when it is due. */
  notice(apiKeyId: string, count: number): void {
    if (this.minVectors === 0 || count < this.minVectors) return;
    const state = this.known.get(apiKeyId);
    if (state && (state.kind !== 'wait' || state.until > Date.now())) return;
    void this.ensure(apiKeyId);
  }

  /** Builds the key's index unless it is there, under way elsewhere, or not due; never throws. */
  ensure(apiKeyId: string): Promise<KeyIndexOutcome> {
    this.known.set(apiKeyId, { kind: 'building' });
    return this.queue(() => this.build(apiKeyId));
  }

  /**
   * After a bulk delete of a key that has an index: drops it when the key kept fewer than
   * half the threshold (none at all when building is off), so a key erased or cut down does
   * not keep an index; the half keeps a key near the threshold from flapping.
   */
  shrank(apiKeyId: string, remaining: number): Promise<void> {
    if (remaining >= Math.max(1, Math.ceil(this.minVectors / 2))) return Promise.resolve();
    this.known.delete(apiKeyId);
    // Before the drop: supersession goes back to the exact statement now, not at the next read.
    this.valid.forget(apiKeyId);
    return (
      this.queue(async () => {
        await this.withBuildClient(async (client) => {
          const name = keyIndexName(apiKeyId);
          if ((await indexState(client, name)) === null) return;
          await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
          this.log.info(
            { index: name, remaining },
            'memory: dropped a per-key vector index (its key shrank)',
          );
        });
      })
        // Again once the drop is done or failed: a catalogue read between the first forget and
        // the drop (which may wait behind a build) saw the index still valid and learnt it back.
        .finally(() => this.valid.forget(apiKeyId))
        .catch((error: unknown) => {
          this.log.warn(
            { err: error, index: keyIndexName(apiKeyId) },
            'memory: per-key vector index not dropped',
          );
        })
    );
  }

  /** Waits for this process's builds and drops (tests, and close). */
  async idle(): Promise<void> {
    for (let seen: Promise<unknown> | null = null; seen !== this.chain; ) {
      seen = this.chain;
      await seen;
    }
  }

  /**
   * Starts no more builds and cancels the one under way (its invalid index is dropped by
   * the build's own cleanup), so a gateway's stop does not wait minutes for a build. The
   * cancel is sent again until the build is over: one that reaches the server between two
   * statements cancels nothing.
   */
  async close(cancel: (pid: number) => Promise<unknown>): Promise<void> {
    this.closing = true;
    let over = false;
    const idle = this.idle().then(() => {
      over = true;
    });
    while (!over) {
      if (this.buildPid !== null) await cancel(this.buildPid).catch(() => {});
      await Promise.race([idle, new Promise((resolve) => setTimeout(resolve, 200))]);
    }
  }

  private queue<T>(step: () => Promise<T>): Promise<T> {
    const run = this.chain.then(step);
    this.chain = run.catch(() => {});
    return run;
  }

  private wait(apiKeyId: string, ms: number): void {
    this.known.set(apiKeyId, { kind: 'wait', until: Date.now() + ms });
  }

  /** A connection of its own, without the store's query timeout: a build takes minutes. */
  private async withBuildClient<T>(work: (client: PgClient) => Promise<T>): Promise<T> {
    const pool: PgPool = createPgPool(this.url, { max: 1 });
    try {
      const client = await pool.connect();
      try {
        return await work(client);
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  }

  private async build(apiKeyId: string): Promise<KeyIndexOutcome> {
    const name = keyIndexName(apiKeyId);
    if (this.closing) return 'closed';
    try {
      return await this.withBuildClient(async (client) => {
        const { rows } = await client.query<{ locked: boolean; pid: number }>(
          `SELECT pg_try_advisory_lock(${BUILD_LOCK}) AS locked, pg_backend_pid() AS pid`,
        );
        if (!rows[0]!.locked) {
          this.wait(apiKeyId, CHECK_AGAIN_MS);
          return 'busy';
        }
        this.buildPid = rows[0]!.pid;
        try {
          return await this.buildLocked(client, apiKeyId, name);
        } finally {
          this.buildPid = null;
          await client.query(`SELECT pg_advisory_unlock(${BUILD_LOCK})`);
        }
      });
    } catch (error) {
      if (this.closing) {
        this.log.info({ index: name }, 'memory: per-key vector index build stopped: the store is closing');
        return 'closed';
      }
      this.log.warn(
        { err: error, index: name, retryInSeconds: RETRY_MS / 1000 },
        'memory: per-key vector index build failed; searches of the key read its vectors exactly until it is built',
      );
      this.wait(apiKeyId, RETRY_MS);
      return 'failed';
    }
  }

  private async buildLocked(client: PgClient, apiKeyId: string, name: string): Promise<KeyIndexOutcome> {
    const due = await this.due(client, apiKeyId, name);
    if (typeof due !== 'number') return due;
    if (this.closing) return 'closed';
    return this.create(client, apiKeyId, name, due);
  }

  /** The key's vector count when a build is due, else the outcome that says why not. */
  private async due(client: PgClient, apiKeyId: string, name: string): Promise<number | KeyIndexOutcome> {
    const found = await indexState(client, name);
    if (found === 'valid') {
      this.valid.learn(apiKeyId);
      this.wait(apiKeyId, RETRY_MS);
      return 'present';
    }
    if (found === 'invalid') {
      this.valid.forget(apiKeyId);
      this.log.warn({ index: name }, 'memory: dropping an unfinished per-key vector index to build it again');
      await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
    }
    const { rows } = await client.query<{ n: string; total: number }>(
      // The table's size as the planner knows it; counted when it was never analysed.
      `SELECT count(*) AS n, (SELECT CASE WHEN reltuples < 0 THEN (SELECT count(*) FROM memory_vectors)
                                          ELSE reltuples END FROM pg_class WHERE oid = 'memory_vectors'::regclass) AS total
         FROM memory_vectors WHERE api_key_id = $1`,
      [apiKeyId],
    );
    const vectors = Number(rows[0]!.n);
    if (vectors < this.minVectors) {
      this.wait(apiKeyId, CHECK_AGAIN_MS);
      return 'under';
    }
    // A key holding most of the table keeps the table-wide index (decision 1102 measured
    // one key alone: the planner stays on it); an index of its own would be a second copy.
    if (vectors * 2 > Number(rows[0]!.total)) {
      this.wait(apiKeyId, RETRY_MS);
      return 'most';
    }
    return vectors;
  }

  private async create(client: PgClient, apiKeyId: string, name: string, vectors: number): Promise<'built'> {
    this.log.info({ index: name, vectors }, 'memory: building a per-key vector index');
    const started = Date.now();
    try {
      // format() quotes the key as a literal: it is the index's predicate.
      const ddl = await client.query<{ sql: string }>(
        `SELECT format('CREATE INDEX CONCURRENTLY IF NOT EXISTS %I ON memory_vectors
                          USING hnsw (embedding vector_cosine_ops) WHERE api_key_id = %L', $1::text, $2::text) AS sql`,
        [name, apiKeyId],
      );
      await client.query(ddl.rows[0]!.sql);
      if ((await indexState(client, name)) !== 'valid') throw new Error('the build left the index invalid');
    } catch (error) {
      // A failed CONCURRENTLY build leaves an invalid index that every write still maintains;
      // a closing store must not cancel its drop.
      this.buildPid = null;
      await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`).catch(() => {});
      throw error;
    }
    this.log.info(
      { index: name, vectors, seconds: Math.round((Date.now() - started) / 100) / 10 },
      'memory: per-key vector index built',
    );
    this.valid.learn(apiKeyId);
    this.wait(apiKeyId, RETRY_MS);
    return 'built';
  }
}
