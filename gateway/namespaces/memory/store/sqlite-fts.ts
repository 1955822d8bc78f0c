import { createHash } from 'node:crypto';
import type { SqliteDatabase } from '../../../store/index.ts';

/**
 * The keyword index holds each word prefixed by a tag of its api key ("k<tag>_word"), so
 * one key's doclists never contain another key's rows: a keyword search costs the same
 * in a file shared by many keys as in one holding a single key, and bm25's document
 * frequencies come from the caller's own memories only. An FTS column holding the key,
 * ANDed into the match, was tried first and made single-key searches ten times slower.
 */
export function keyTag(apiKeyId: string): string {
  return `k${createHash('sha256').update(apiKeyId).digest('hex').slice(0, 12)}`;
}

/** Words as the index sees them; the query side splits the same way (see ftsQuery). */
function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

export function ftsText(apiKeyId: string, content: string): string {
  const tag = keyTag(apiKeyId);
  return words(content)
    .map((word) => `${tag}_${word}`)
    .join(' ');
}

/** An FTS5 MATCH expression: any of the terms, in the caller's key only. */
export function ftsQuery(apiKeyId: string, terms: string[]): string | null {
  const tag = keyTag(apiKeyId);
  const tokens = [...new Set(terms.flatMap(words))];
  return tokens.length === 0 ? null : tokens.map((token) => `"${tag}_${token}"`).join(' OR ');
}

/**
 * The triggers call memory_fts_text, so every connection that writes memories registers
 * it before touching the file (the store does so before its migrations).
 */
export function registerMemoryFunctions(db: SqliteDatabase): void {
  db.function('memory_fts_text', { deterministic: true }, (apiKeyId, content) =>
    ftsText(String(apiKeyId), String(content)),
  );
}

/** Schema version 4: the key-tagged, contentless keyword index. */
export const KEY_TAGGED_FTS_SQL = `
  DROP TRIGGER memories_fts_insert;
  DROP TRIGGER memories_fts_delete;
  DROP TRIGGER memories_fts_update;
  DROP TABLE memories_fts;
  CREATE VIRTUAL TABLE memories_fts USING fts5(
    body, content='', contentless_delete=1, tokenize="porter unicode61 remove_diacritics 2 tokenchars '_'"
  );
  INSERT INTO memories_fts (rowid, body) SELECT id, memory_fts_text(api_key_id, content) FROM memories;
  CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, body) VALUES (new.id, memory_fts_text(new.api_key_id, new.content));
  END;
  CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.id;
  END;
  CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.id;
    INSERT INTO memories_fts (rowid, body) VALUES (new.id, memory_fts_text(new.api_key_id, new.content));
  END;
`;
