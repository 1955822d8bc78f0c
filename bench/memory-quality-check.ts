/**
 * `npx tsx bench/memory-quality-check.ts [file…]`: checks conversation set files against
 * FORMAT.md before they are measured, so a wrong index fails loudly instead of scoring as
 * a miss. Prints each question's content-word overlap with its evidence (the set aims low).
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { type Conversation, overlap, type QuestionType } from './memory-quality-set.ts';

const TYPES: readonly QuestionType[] = [
  'user_fact',
  'assistant_fact',
  'preference',
  'update',
  'temporal',
  'multi_session',
  'unanswerable',
];

/** What a set's conversations look like: the chats set is short, often one session. */
export interface SetShape {
  minTurns: number;
  minSessions: number;
}
export const LONG: SetShape = { minTurns: 10, minSessions: 2 };
export const SHORT: SetShape = { minTurns: 6, minSessions: 1 };

export function checkConversation(c: Conversation, shape: SetShape = LONG): string[] {
  const problems: string[] = [];
  const turns = c.sessions.reduce((n, s) => n + s.turns.length, 0);
  if (!/^[a-z]+\d{2}$/.test(c.id)) problems.push(`${c.id}: id must be letters then two digits`);
  if (turns < shape.minTurns || turns > 60)
    problems.push(`${c.id}: ${turns} turns (${shape.minTurns}-60 wanted)`);
  if (c.sessions.length < shape.minSessions)
    problems.push(`${c.id}: ${c.sessions.length} session(s) (${shape.minSessions}+ wanted)`);
  let last = 0;
  for (const [i, s] of c.sessions.entries()) {
    const t = Date.parse(s.date);
    if (Number.isNaN(t)) problems.push(`${c.id}: session ${i} date ${s.date} is not ISO 8601`);
    if (t <= last) problems.push(`${c.id}: session ${i} is not later than the one before`);
    last = t;
    for (const turn of s.turns) {
      if (turn.role !== 'user' && turn.role !== 'assistant') problems.push(`${c.id}: bad role ${turn.role}`);
      if (!turn.content?.trim()) problems.push(`${c.id}: empty turn in session ${i}`);
    }
  }
  const at = ([s, t]: [number, number]) => c.sessions[s]?.turns[t];
  for (const q of c.questions) {
    const where = `${c.id}/${q.id}`;
    if (!q.id.startsWith(`${c.id}-`)) problems.push(`${where}: question id must start with ${c.id}-`);
    if (!TYPES.includes(q.type)) problems.push(`${where}: unknown type ${q.type}`);
    for (const pair of [...q.evidence, ...(q.stale ?? [])]) {
      if (!at(pair)) problems.push(`${where}: no turn at ${JSON.stringify(pair)}`);
    }
    const evidence = q.evidence.map(at).filter((t) => t !== undefined);
    if (q.type === 'unanswerable' && q.evidence.length > 0)
      problems.push(`${where}: unanswerable with evidence`);
    if (q.type !== 'unanswerable' && q.evidence.length === 0) problems.push(`${where}: no evidence`);
    if (q.type === 'assistant_fact' && !evidence.some((t) => t.role === 'assistant'))
      problems.push(`${where}: assistant_fact needs an assistant evidence turn`);
    if (q.type !== 'assistant_fact' && q.type !== 'unanswerable' && !evidence.some((t) => t.role === 'user'))
      problems.push(`${where}: ${q.type} needs a user evidence turn (user-turns variant)`);
    if (q.type === 'multi_session' && new Set(q.evidence.map(([s]) => s)).size < 2)
      problems.push(`${where}: multi_session evidence must span two sessions`);
    if (q.type === 'update') {
      if (!q.stale?.length) problems.push(`${where}: update needs stale turns`);
      const newest = Math.max(...q.evidence.map(([s, t]) => s * 1000 + t));
      if (q.stale?.some(([s, t]) => s * 1000 + t >= newest))
        problems.push(`${where}: stale turn after the evidence`);
    } else if (q.stale?.length) problems.push(`${where}: stale is only for update`);
  }
  return problems;
}

function main(files: string[]): number {
  let bad = 0;
  const counts: Record<string, number> = {};
  const overlaps: number[] = [];
  for (const file of files) {
    const { conversations } = JSON.parse(readFileSync(file, 'utf8')) as { conversations: Conversation[] };
    for (const c of conversations) {
      for (const p of checkConversation(c, file.includes('/chats/') ? SHORT : LONG)) {
        console.log(`${basename(file)}: ${p}`);
        bad++;
      }
      for (const q of c.questions) {
        counts[q.type] = (counts[q.type] ?? 0) + 1;
        if (q.evidence.length === 0) continue;
        const n = overlap(c, q);
        overlaps.push(n);
        if (n > 1) console.log(`${basename(file)}: ${q.id} overlap ${n}: ${q.question}`);
      }
    }
  }
  overlaps.sort((a, b) => a - b);
  console.log(`question types: ${JSON.stringify(counts)}`);
  console.log(`median content-word overlap: ${overlaps[Math.floor(overlaps.length / 2)] ?? 0}`);
  console.log(bad === 0 ? 'ok' : `${bad} problem(s)`);
  return bad === 0 ? 0 : 1;
}

if (process.argv[1]?.endsWith('memory-quality-check.ts')) process.exitCode = main(process.argv.slice(2));
