import type { SqliteDatabase } from '../../../store/index.ts';
import type { Statements } from './sqlite-rows.ts';

const VOCABULARY = 'SELECT term, doc FROM memories_fts_vocab WHERE term IN (SELECT value FROM json_each(?))';

/** Terms remembered at most; past it the cache starts again (a term is a key's tagged stem). */
const MAX_TERMS = 50_000;

/**
 * Each tagged term's document count in the keyword index (its row in the vocabulary table),
 * kept until the file changes. A keyword search asks for the count of every query stem, and
 * the vocabulary answers by walking each term's doclist: a tenth of a search's CPU at 10,000
 * memories for the key (bench/results/NOTES.md). The counts move only when memories are
 * written, so any commit empties the cache: this connection's own (`total_changes()`) or
 * another's, a thread, a process or the CLI on the same file (`data_version`).
 */
export class DocumentFrequencies {
  private readonly version;
  private seen: string | null = null;
  private readonly counts = new Map<string, number>();

  constructor(
    db: SqliteDatabase,
    private readonly st: Statements,
  ) {
    this.version = db
      .prepare("SELECT (SELECT data_version FROM pragma_data_version()) || ':' || total_changes()")
      .pluck();
  }

  /** The document count of each term, in the order given (0 for a term no memory holds). */
  of(terms: string[]): number[] {
    const version = this.version.get() as string;
    if (version !== this.seen || this.counts.size > MAX_TERMS) {
      this.counts.clear();
      this.seen = version;
    }
    const missing = terms.filter((term) => !this.counts.has(term));
    if (missing.length > 0) {
      for (const term of missing) this.counts.set(term, 0);
      for (const row of this.st(VOCABULARY).all(JSON.stringify(missing)) as { term: string; doc: number }[])
        this.counts.set(row.term, row.doc);
    }
    return terms.map((term) => this.counts.get(term)!);
  }
}
