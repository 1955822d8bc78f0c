import type { SqliteDatabase } from '../../../store/index.ts';
import { keyTag } from './common.ts';
import { textStems } from './text.ts';

/**
 * The keyword index holds each word's Porter stem, computed here (text.ts), prefixed by a
 * tag of its api key ("k<tag>_<stem>"). The stem is the one FTS5's own `porter unicode61`
 * gives the word on the text alone: the tag is added after stemming, so it never changes
 * what a word matches (schema 4 put the tag before FTS5's stemmer ran, and "user" then
 * matched "use"). The tag keeps one key's doclists free of another key's rows, so a
 * search costs the same in a file shared by many keys, and the document frequency of a
 * tagged term counts the caller's memories only. The FTS5 tokenizer is `ascii` with `_`
 * as a token character: it splits on the spaces between prepared tokens and nothing else.
 */
export function ftsText(apiKeyId: string, content: string): string {
  const tag = keyTag(apiKeyId);
  return textStems(content)
    .map((stem) => `${tag}_${stem}`)
    .join(' ');
}

/** The tagged index terms of the given stems, in the same order. */
export function ftsTerms(apiKeyId: string, stems: string[]): string[] {
  const tag = keyTag(apiKeyId);
  return stems.map((stem) => `${tag}_${stem}`);
}

/** An FTS5 MATCH expression: any of the terms. */
export function ftsQuery(terms: string[]): string | null {
  return terms.length === 0 ? null : terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(' OR ');
}

/**
 * Leaf pages of keyword-index merging done after each write group (see MERGE_STEP_SQL). A
 * group of 16 memories writes one or two leaves, and FTS5's own rule merges about as many
 * pages per leaf as the index has levels (4 to 6 here), so 16 keeps up with a steady write
 * load: after 58k writes in groups of 16, the index held 8 segments, against 13 with FTS5's
 * automatic merging.
 */
export const MERGE_STEP_PAGES = 16;

/**
 * FTS5's automatic merge does its work in quanta of 64 leaves times the index's levels, all
 * inside whichever commit crosses the quantum: 12–40 ms of CPU on the request thread once
 * every few hundred write groups at 10–40k memories, each time holding every write of that
 * group. With it off (schema 7), the write group runs this after its writes instead, the
 * same policy (a level merges once it holds `usermerge`, 4, segments) in small steps. A
 * connection that never runs it (the re-embed command, updates and deletes alone) is still
 * bounded by FTS5's crisis merge at 16 segments a level.
 */
export const MERGE_STEP_SQL = `INSERT INTO memories_fts (memories_fts, rank) VALUES ('merge', ${MERGE_STEP_PAGES})`;

/** Schema version 7: the keyword index is merged by the write group, not inside a commit. */
export const WRITER_MERGES_FTS_SQL = `INSERT INTO memories_fts (memories_fts, rank) VALUES ('automerge', 0);`;

/**
 * The triggers call memory_fts_text, so every connection that writes memories registers
 * it before touching the file (the store does so before its migrations).
 */
export function registerMemoryFunctions(db: SqliteDatabase): void {
  db.function('memory_fts_text', { deterministic: true }, (apiKeyId, content) =>
    ftsText(String(apiKeyId), String(content)),
  );
}

const FTS_TRIGGERS_SQL = `
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

const DROP_FTS_SQL = `
  DROP TRIGGER memories_fts_insert;
  DROP TRIGGER memories_fts_delete;
  DROP TRIGGER memories_fts_update;
  DROP TABLE memories_fts;
`;

/**
 * Replaces the keyword index with a contentless one of this tokenizer, filled from every
 * memory and kept in step by the triggers.
 */
function rebuildFtsSql(tokenize: string): string {
  return `
    ${DROP_FTS_SQL}
    CREATE VIRTUAL TABLE memories_fts USING fts5(body, content='', contentless_delete=1, tokenize="${tokenize}");
    INSERT INTO memories_fts (rowid, body) SELECT id, memory_fts_text(api_key_id, content) FROM memories;
    ${FTS_TRIGGERS_SQL}
  `;
}

/** Schema version 4: the key-tagged, contentless keyword index (FTS5's porter after the tag). */
export const KEY_TAGGED_FTS_SQL = rebuildFtsSql("porter unicode61 remove_diacritics 2 tokenchars '_'");

/**
 * Schema version 6: stems made before the tag (see above), a vocabulary view for each
 * term's document count, and superseded memories. A memory whose superseder is deleted
 * becomes current again.
 */
export const STEMMED_FTS_SQL = `
  ${rebuildFtsSql("ascii tokenchars '_'")}
  CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab(memories_fts, row);
  ALTER TABLE memories ADD COLUMN superseded_by TEXT;
  CREATE INDEX memories_superseded ON memories (superseded_by) WHERE superseded_by IS NOT NULL;
  CREATE TRIGGER memories_supersede_release AFTER DELETE ON memories BEGIN
    UPDATE memories SET superseded_by = NULL WHERE superseded_by = old.public_id;
  END;
`;
