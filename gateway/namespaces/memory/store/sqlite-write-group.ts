import type Database from 'better-sqlite3';
import type { SqliteDatabase } from '../../../store/index.ts';

interface Job {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for one connection. Writes that arrive in the same turn of the event loop
 * run in one IMMEDIATE transaction, each inside its own savepoint, and are answered only
 * after that transaction commits. A single-row commit rewrote about 15 WAL pages (table
 * and index leaves, a new keyword-index segment, the per-key count); sixteen rows in one
 * commit wrote about 4 pages each. Fewer pages also keep the WAL under the fallback
 * checkpoint size, whose copy-and-sync stalled the request thread for 50–80 ms.
 *
 * A job that throws rolls back its own savepoint only; a failed commit fails every job
 * of the group, so nothing is reported written that was not committed.
 */
export class SqliteWriteGroup {
  private queue: Job[] = [];
  private readonly inSavepoint: (job: Job) => unknown;
  private readonly all: Database.Transaction<(jobs: Job[]) => { ok: boolean; value: unknown }[]>;

  /**
   * `tidy` runs once per group, after its writes and inside its transaction (the store's
   * keyword-index merge step); a failure there is the tidy's alone, never the writes'.
   */
  constructor(db: SqliteDatabase, tidy: () => void = () => {}) {
    // Nested inside `all`, better-sqlite3 runs this as SAVEPOINT / RELEASE.
    this.inSavepoint = db.transaction((job: Job) => job.work());
    const tidyInSavepoint = db.transaction(tidy);
    this.all = db.transaction((jobs: Job[]) => {
      const outcomes = jobs.map((job) => {
        try {
          return { ok: true, value: this.inSavepoint(job) };
        } catch (error) {
          return { ok: false, value: error };
        }
      });
      try {
        tidyInSavepoint();
      } catch {
        // Left for the next group; FTS5's crisis merge bounds the index meanwhile.
      }
      return outcomes;
    });
  }

  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // setImmediate runs after the I/O callbacks of this turn, so the requests read in
      // it have all queued their writes by then.
      if (this.queue.length === 0) setImmediate(() => this.flush());
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** Commits whatever is queued now; the store calls it before closing the connection. */
  flush(): void {
    const jobs = this.queue;
    if (jobs.length === 0) return;
    this.queue = [];
    let outcomes: { ok: boolean; value: unknown }[];
    try {
      outcomes = this.all.immediate(jobs);
    } catch (error) {
      for (const job of jobs) job.reject(error);
      return;
    }
    for (const [i, job] of jobs.entries()) {
      const outcome = outcomes[i]!;
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.value);
    }
  }
}
