/**
 * How `npm run bench -- memory-quality` chooses the ranking constants: on the tuning halves
 * of every set at once, never on a held-out half. The default (hybrid) must not lose to its
 * own vector arm on any set: a choice whose hybrid hit@1 or hit@5 falls under `mode:
 * "vector"` with the same constants on some set's tuning half is not a candidate.
 */
import type { RankSettings } from '../gateway/namespaces/memory/ranking.ts';
import type { Built } from './memory-quality-build.ts';
import {
  type Conversation,
  type Half,
  halfOf,
  type QuestionScore,
  type Report,
  report,
} from './memory-quality-set.ts';

export type Mode = 'hybrid' | 'vector' | 'keyword';

/** One built store of one set: its candidates per mode (they do not depend on the constants). */
export interface Run {
  set: string;
  variant: 'user' | 'all';
  built: Built;
  /** Scores every question of this run under the given constants and mode. */
  score(settings: RankSettings, mode: Mode | 'cosine', half?: Half): QuestionScore[];
}

/**
 * The tuning objective: ranking first, then the stale-vs-current order, each question
 * counted once. The order is weighed by the update questions' share of the answerable
 * ones: at full weight, 18 update questions outvoted the whole half's hit@1 and the tuner
 * bought newest-first with a lower hit@1 on the tuning half itself (0.55 against 0.58).
 */
function objective(rep: Report): number {
  const updates = rep.byType.update?.questions ?? 0;
  return rep.hitAt1 + rep.hitAt5 + rep.mrr + ((rep.newestFirst ?? 0) * updates) / Math.max(1, rep.questions);
}

/**
 * How well "weak" separates absent answers from present ones: unanswerable questions called
 * weak minus answerable ones called weak (Youden's J). F1 was tried first and chose a floor
 * that called nearly every answer weak (recall 1 at the base-rate precision), which tells
 * an agent nothing; J is 0 for any floor that cannot tell the two apart.
 */
function separation(rep: Report): number {
  return rep.abstention.recall - rep.abstention.falseAlarm;
}

export const THRESHOLDS = [1, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7];
/**
 * The vector share. Only 1 is searched: the keyword arm then orders nothing by itself; it
 * breaks exact ties, rescues what the vector arm calls noise (see hideBelow) and ranks
 * memories not embedded yet. Measured on both sets (docs/decisions/0301-memory-default-never-under-vector.md): every smaller
 * share that the tuning halves preferred (0.95 best) lost hit@1 to `mode: "vector"` on a
 * held-out half, because the sets' questions share no content word with their answers
 * (conversations) or share only everyday ones (chats). MEMORY_QUALITY_WEIGHTS=0.3,…,1
 * searches a grid again.
 */
const WEIGHTS = (process.env.MEMORY_QUALITY_WEIGHTS ?? '1').split(',').map(Number);
const NEWER_WITHIN = [0, 0.025, 0.05, 0.1, 0.15, 0.2];
const NEWER_WITHIN_NOW = [0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5];
const CHANGED_WITHIN = [0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1];

/**
 * The embedder's cosine scale from unrelated pairs only (a question against turns of other
 * conversations of the tuning half): `floor` is their median, `full` their 99.9th
 * percentile. No label is used, so this calibrates the embedder, not the set.
 */
export function calibrate(
  conversations: Conversation[],
  vectors: Map<string, Float32Array>,
  embedded: (question: string) => string,
): { floor: number; full: number } {
  const tuning = conversations.filter((c) => halfOf(c) === 'tuning');
  const cosines: number[] = [];
  for (const [i, c] of tuning.entries()) {
    const other = tuning[(i + 1) % tuning.length]!;
    const turns = other.sessions.flatMap((s) => s.turns.map((t) => vectors.get(t.content)!));
    for (const q of c.questions) {
      const qv = vectors.get(embedded(q.question))!;
      for (const tv of turns) cosines.push(qv.reduce((sum, x, k) => sum + x * tv[k]!, 0));
    }
  }
  cosines.sort((a, b) => a - b);
  const at = (p: number) => cosines[Math.min(cosines.length - 1, Math.floor(p * cosines.length))]!;
  return { floor: Math.round(at(0.5) * 1000) / 1000, full: Math.round(at(0.999) * 1000) / 1000 };
}

/**
 * The default does at least as well as its vector arm and as plain cosine over the same
 * vectors (the simplest arm) on every run's tuning half, and leaves no answer out.
 */
function holdsAgainstVector(runs: Run[], plain: Run[], settings: RankSettings): boolean {
  for (const [i, run] of runs.entries()) {
    const hybrid = report(run.score(settings, 'hybrid', 'tuning'));
    if (hybrid.falseEmpty > 0) return false;
    // Plain cosine runs on the store without automatic supersession: what it costs counts.
    const arms = [run.score(settings, 'vector', 'tuning'), plain[i]!.score(settings, 'cosine', 'tuning')];
    for (const arm of arms.map(report)) {
      if (hybrid.hitAt1 < arm.hitAt1 || hybrid.hitAt5 < arm.hitAt5) return false;
    }
  }
  return true;
}

export interface Tuned {
  settings: RankSettings;
  supersedeAbove: number;
  /** Grid points turned down because hybrid lost to vector on some tuning half. */
  refused: number;
}

/** Chooses the fusion, the vector weight and the update windows on the tuning halves, then the weak and noise floors. */
export function tune(
  runsOf: (theta: number) => Run[],
  base: RankSettings,
  log: (line: string) => void,
): Tuned {
  let best = { value: -1, fusion: base.fusion, vectorWeight: 1, supersedeAbove: 1, newerWithin: 0 };
  let refused = 0;
  const open = { weakBelow: 0, hideBelow: 0 };
  const plain = runsOf(1);
  for (const theta of THRESHOLDS) {
    const runs = runsOf(theta);
    for (const fusion of ['convex', 'rrf'] as const) {
      for (const vectorWeight of WEIGHTS) {
        for (const newerWithin of NEWER_WITHIN) {
          const settings = {
            ...base,
            fusion,
            vectorWeight,
            newerWithin,
            newerWithinNow: newerWithin,
            ...open,
          };
          let value = 0;
          for (const run of runs) value += objective(report(run.score(settings, 'hybrid', 'tuning')));
          if (value <= best.value) continue;
          if (!holdsAgainstVector(runs, plain, settings)) {
            refused++;
            continue;
          }
          best = { value, fusion, vectorWeight, supersedeAbove: theta, newerWithin };
        }
      }
    }
  }
  log(
    `memory-quality: tuned ${best.fusion} v=${best.vectorWeight} supersede>${best.supersedeAbove} newer within ${best.newerWithin} (${refused} better-scoring points lost to vector somewhere)`,
  );
  const runs = runsOf(best.supersedeAbove);
  const { supersedeAbove: _stale, ...rest } = base as RankSettings & { supersedeAbove?: number };
  const pooled = (settings: RankSettings, mode: Mode = 'hybrid') =>
    report(runs.flatMap((run) => run.score(settings, mode, 'tuning')));
  type Windows = Pick<RankSettings, 'newerWithinNow' | 'changedWithin' | 'changedWithinNow'>;
  const at = (windows: Windows, weakBelow: number, hideBelow: number): RankSettings => ({
    ...rest,
    fusion: best.fusion,
    vectorWeight: best.vectorWeight,
    newerWithin: best.newerWithin,
    ...windows,
    weakBelow,
    hideBelow,
  });
  // The windows for questions about the present and for memories that say something
  // changed, once the rest is fixed (they move only newer matches past older ones).
  let windows: Windows = { newerWithinNow: best.newerWithin };
  let bestNow = -1;
  for (const now of NEWER_WITHIN_NOW.filter((w) => w >= best.newerWithin)) {
    for (const changed of CHANGED_WITHIN.filter((w) => w >= best.newerWithin)) {
      for (const changedNow of CHANGED_WITHIN.filter((w) => w >= now)) {
        const candidate = { newerWithinNow: now, changedWithin: changed, changedWithinNow: changedNow };
        const settings = at(candidate, 0, 0);
        const value = objective(pooled(settings));
        if (value > bestNow && holdsAgainstVector(runs, plain, settings))
          [bestNow, windows] = [value, candidate];
      }
    }
  }
  log(
    `memory-quality: newer within ${windows.newerWithinNow} for questions about the present; a memory saying something changed within ${windows.changedWithin} (${windows.changedWithinNow} about the present)`,
  );
  let weakBelow = 0;
  let bestJ = 0;
  for (let w = 0.05; w <= 0.8; w += 0.025) {
    // Weak hits rank under strong ones, so the floor moves the order too: it must keep the
    // default at least as good as both arms.
    const settings = at(windows, Math.round(w * 1000) / 1000, 0);
    const value = separation(pooled(settings));
    if (value > bestJ && holdsAgainstVector(runs, plain, settings))
      [bestJ, weakBelow] = [value, settings.weakBelow];
  }
  // No noise floor: every floor the tuning halves allowed (0.03 the highest) cost a held-out
  // half hit@5 against plain cosine (docs/decisions/0301-memory-default-never-under-vector.md). Weak hits stay in the answer,
  // flagged weak, and the note says the answer may not be stored.
  const hideBelow = 0;
  const settings = at(windows, weakBelow, hideBelow);
  log(`memory-quality: weak under ${weakBelow}, hidden under ${hideBelow}`);
  return { settings, supersedeAbove: best.supersedeAbove, refused };
}
