/**
 * The conversation set of `npm run bench -- memory-quality` (bench/data/conversations,
 * format in FORMAT.md): loading, the fixed tuning / held-out split, and the scoring of one
 * question's ranked answer.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { queryWords, textStems } from '../gateway/namespaces/memory/store/text.ts';
import { benchRoot } from './child.ts';

export type QuestionType =
  | 'user_fact'
  | 'assistant_fact'
  | 'preference'
  | 'update'
  | 'temporal'
  | 'multi_session'
  | 'unanswerable';

export interface Turn {
  role: 'user' | 'assistant';
  content: string;
}

export interface Conversation {
  id: string;
  sessions: { date: string; turns: Turn[] }[];
  questions: {
    id: string;
    type: QuestionType;
    question: string;
    evidence: [number, number][];
    stale?: [number, number][];
    answer?: string;
  }[];
}

export type Variant = 'user' | 'all';
export type Half = 'tuning' | 'heldout';

/**
 * The sets measured, each a directory of `set-*.json` files in this format:
 * - `conversations`: long dated chats whose questions share no content word with their answers;
 * - `chats`: short chats in the style of outside memory benchmarks, whose questions share
 *   everyday words ("the user", "currently", "name") with many turns.
 * MEMORY_QUALITY_SET points the benchmark at one other directory instead.
 */
export interface EvalSet {
  name: string;
  dir: string;
}

export function evalSets(): EvalSet[] {
  if (process.env.MEMORY_QUALITY_SET) return [{ name: 'custom', dir: process.env.MEMORY_QUALITY_SET }];
  return ['conversations', 'chats'].map((name) => ({ name, dir: join(benchRoot, 'bench', 'data', name) }));
}

export function loadConversations(dir: string): Conversation[] {
  const files = readdirSync(dir)
    .filter((name) => /^set-[a-z0-9-]+\.json$/.test(name))
    .sort();
  const all: Conversation[] = [];
  for (const file of files) {
    const parsed = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { conversations: Conversation[] };
    all.push(...parsed.conversations);
  }
  return all;
}

/**
 * The split is fixed by position before any measurement: within each set file, odd
 * conversations (01, 03, …) tune and even ones are held out. Constants are chosen on the
 * tuning half only; the held-out half is reported, never searched over.
 */
export function halfOf(conversation: Conversation): Half {
  const n = Number(conversation.id.match(/(\d+)$/)?.[1] ?? 0);
  return n % 2 === 1 ? 'tuning' : 'heldout';
}

/** A turn is stored in the variant: user turns only, or every turn. */
export function stored(turn: Turn, variant: Variant): boolean {
  return variant === 'all' || turn.role === 'user';
}

/**
 * Session date plus a minute per turn: the order the memories were written in. With
 * MEMORY_QUALITY_TIMES=undated every turn is written a second after the one before, with
 * no session dates, as an agent writing a whole chat in one burst would.
 */
export function turnTime(conversation: Conversation, session: number, turn: number): number {
  if (process.env.MEMORY_QUALITY_TIMES === 'undated') {
    const before = conversation.sessions.slice(0, session).reduce((n, s) => n + s.turns.length, 0);
    return Date.parse('2026-01-01T00:00:00Z') + (before + turn) * 1000;
  }
  return Date.parse(conversation.sessions[session]!.date) + turn * 60_000;
}

/** Content words shared by a question and its evidence turns (stems, query stopwords dropped). */
export function overlap(conversation: Conversation, question: Conversation['questions'][number]): number {
  const asked = new Set(queryWords(question.question).stems);
  const shared = new Set<string>();
  for (const [s, t] of question.evidence) {
    for (const stem of textStems(conversation.sessions[s]!.turns[t]!.content)) {
      if (asked.has(stem)) shared.add(stem);
    }
  }
  return shared.size;
}

/** What one question's answer scored. */
export interface QuestionScore {
  type: QuestionType;
  answerable: boolean;
  /** 1-based rank of the first evidence turn among the hits, null when absent. */
  rank: number | null;
  /** For update questions: the current fact ranks above every stale one (or they are hidden). */
  newestFirst: boolean | null;
  /** The answer said the best match is weak (the agent should say "I don't know"). */
  weak: boolean;
  /** No hits at all while the evidence is stored. */
  falseEmpty: boolean;
  /** The note claims nothing is stored while the key holds memories. */
  claimsNothingStored: boolean;
  ms: number;
}

export interface Summary {
  questions: number;
  hitAt1: number;
  hitAt5: number;
  mrr: number;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

export function summarise(scores: QuestionScore[]): Summary {
  const answerable = scores.filter((s) => s.answerable);
  const n = Math.max(1, answerable.length);
  return {
    questions: answerable.length,
    hitAt1: round(answerable.filter((s) => s.rank === 1).length / n),
    hitAt5: round(answerable.filter((s) => s.rank !== null && s.rank <= 5).length / n),
    mrr: round(answerable.reduce((sum, s) => sum + (s.rank ? 1 / s.rank : 0), 0) / n),
  };
}

export interface Report extends Summary {
  byType: Record<string, Summary>;
  newestFirst: number | null;
  /** recall: unanswerable questions called weak; falseAlarm: answerable ones called weak. */
  abstention: { precision: number; recall: number; falseAlarm: number };
  falseEmpty: number;
  claimsNothingStored: number;
  p50Ms: number;
  p99Ms: number;
}

export function report(scores: QuestionScore[]): Report {
  const byType: Record<string, Summary> = {};
  for (const type of new Set(scores.filter((s) => s.answerable).map((s) => s.type))) {
    byType[type] = summarise(scores.filter((s) => s.type === type));
  }
  const updates = scores.filter((s) => s.newestFirst !== null);
  const said = scores.filter((s) => s.weak);
  const truly = scores.filter((s) => !s.answerable);
  const times = scores.map((s) => s.ms).sort((a, b) => a - b);
  const at = (p: number) =>
    round(times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))] ?? 0);
  return {
    ...summarise(scores),
    byType,
    newestFirst: updates.length ? round(updates.filter((s) => s.newestFirst).length / updates.length) : null,
    abstention: {
      precision: round(said.filter((s) => !s.answerable).length / Math.max(1, said.length)),
      recall: round(truly.filter((s) => s.weak).length / Math.max(1, truly.length)),
      falseAlarm: round(
        scores.filter((s) => s.answerable && s.weak).length / Math.max(1, scores.length - truly.length),
      ),
    },
    falseEmpty: scores.filter((s) => s.falseEmpty).length,
    claimsNothingStored: scores.filter((s) => s.claimsNothingStored).length,
    p50Ms: at(50),
    p99Ms: at(99),
  };
}
