/**
 * `npm run bench -- memory-quality [--embedder local|minilm]`: retrieval quality on
 * conversations written for this project (bench/data/conversations), LongMemEval-style:
 * every turn stored as one memory under its conversation's key, questions asked with the
 * query alone. Constants are chosen on the tuning half (see memory-quality-set.ts) and both
 * halves are reported, for SQLite and Postgres, user turns only and all turns, beside a
 * keyword-only baseline. Results: bench/results/memory-quality[-<embedder>].json.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { asksAboutNow, firstPersonQuery } from '../gateway/namespaces/memory/query-voice.ts';
import { type RankSettings, rankCandidates } from '../gateway/namespaces/memory/ranking.ts';
import { searchNote } from '../gateway/namespaces/memory/service.ts';
import { SEARCH_DEFAULTS } from '../gateway/namespaces/memory/settings.ts';
import { queryWords } from '../gateway/namespaces/memory/store/text.ts';
import type { MemoryStore, SearchCandidates, SearchMode } from '../gateway/namespaces/memory/store/types.ts';
import { benchRoot } from './child.ts';
import { machineInfo } from './machine.ts';
import { type Built, buildKeys, embedTexts, openStore } from './memory-quality-build.ts';
import {
  type Conversation,
  type Half,
  halfOf,
  loadConversations,
  overlap,
  type QuestionScore,
  type Report,
  report,
  type Variant,
} from './memory-quality-set.ts';

type Provider = 'local' | 'minilm';
/** MEMORY_QUALITY_STORES=sqlite skips the Postgres pass (quick iterations; reports need both). */
const STORES = (['sqlite', 'postgres'] as const).filter(
  (kind) => !process.env.MEMORY_QUALITY_STORES || process.env.MEMORY_QUALITY_STORES.split(',').includes(kind),
);
const LIMIT = 10;
/** What the service embeds for a query (MEMORY_QUALITY_VOICE=raw measures the question as asked). */
const asEmbedded = (question: string) =>
  process.env.MEMORY_QUALITY_VOICE === 'raw' ? question : firstPersonQuery(question);

interface Asked {
  conversation: Conversation;
  question: Conversation['questions'][number];
  half: Half;
  found: SearchCandidates;
  stems: string[];
  asksNow: boolean;
  ms: number;
}

/** Every question's candidates for one built store (they do not depend on the ranking settings). */
export async function ask(
  store: MemoryStore,
  built: Built,
  conversations: Conversation[],
  vectors: Map<string, Float32Array>,
  mode: SearchMode,
  variant: Variant,
): Promise<Asked[]> {
  const asked: Asked[] = [];
  for (const conversation of conversations) {
    for (const question of conversation.questions) {
      // With user turns alone an assistant's statement is not stored: the question is skipped.
      if (variant === 'user' && question.type === 'assistant_fact') continue;
      const { words, stems } = queryWords(question.question);
      const started = performance.now();
      const found = await store.search(
        built.keys.get(conversation.id)!,
        {
          words,
          stems,
          vector: mode === 'keyword' ? null : vectors.get(asEmbedded(question.question))!,
          mode,
          fetch: Math.max(LIMIT * 4, 40),
          filter: { currentOnly: true },
        },
        Date.now(),
      );
      asked.push({
        conversation,
        question,
        half: halfOf(conversation),
        found,
        stems,
        asksNow: asksAboutNow(question.question),
        ms: performance.now() - started,
      });
    }
  }
  return asked;
}

function score(a: Asked, built: Built, settings: RankSettings, mode: SearchMode): QuestionScore {
  const started = performance.now();
  const ranked = rankCandidates(
    a.found,
    { stems: a.stems, mode, limit: LIMIT, includeWeak: false, asksNow: a.asksNow },
    settings,
    Date.now(),
  );
  const ms = a.ms + (performance.now() - started);
  const idsOf = (pairs: [number, number][] | undefined) =>
    (pairs ?? [])
      .map(([s, t]) => built.ids.get(`${a.conversation.id}/${s}/${t}`))
      .filter((id) => id !== undefined);
  const evidence = idsOf(a.question.evidence);
  const position = (ids: string[]) => {
    const i = ranked.hits.findIndex((hit) => ids.includes(hit.memory.id));
    return i < 0 ? null : i + 1;
  };
  const rank = position(evidence);
  const stale = idsOf(a.question.stale);
  const staleRank = position(stale);
  const note = searchNote(ranked, a.found.total, settings.weakBelow) ?? '';
  return {
    type: a.question.type,
    answerable: evidence.length > 0,
    rank,
    newestFirst:
      a.question.type === 'update' && stale.length > 0
        ? rank !== null && (staleRank === null || rank < staleRank)
        : null,
    weak: ranked.weak,
    falseEmpty: evidence.length > 0 && ranked.hits.length === 0,
    claimsNothingStored: a.found.total > 0 && /no memories|nothing relevant is stored/i.test(note),
    ms,
  };
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

const THRESHOLDS = [1, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7];
/**
 * The set's questions are written to share no content word with their answers, so it cannot
 * show what the keyword arm is for (names, numbers, rare terms an agent repeats verbatim).
 * The vector share stops at 0.9: keywords always keep a tenth, which cost the tuning half
 * nothing measurable against 1.0 (hit@1 0.571 both, user turns, USE-lite).
 */
const WEIGHTS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
const NEWER_WITHIN = [0, 0.025, 0.05, 0.1, 0.15, 0.2];
const NEWER_WITHIN_NOW = [0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5];
const VARIANTS: Variant[] = ['user', 'all'];

/**
 * The embedder's cosine scale from unrelated pairs only (a question against turns of other
 * conversations of the tuning half): `floor` is their median, `full` their 99.9th
 * percentile. No label is used, so this calibrates the embedder, not the set.
 */
export function calibrate(
  conversations: Conversation[],
  vectors: Map<string, Float32Array>,
): { floor: number; full: number } {
  const tuning = conversations.filter((c) => halfOf(c) === 'tuning');
  const cosines: number[] = [];
  for (const [i, c] of tuning.entries()) {
    const other = tuning[(i + 1) % tuning.length]!;
    const turns = other.sessions.flatMap((s) => s.turns.map((t) => vectors.get(t.content)!));
    for (const q of c.questions) {
      const qv = vectors.get(asEmbedded(q.question))!;
      for (const tv of turns) cosines.push(qv.reduce((sum, x, k) => sum + x * tv[k]!, 0));
    }
  }
  cosines.sort((a, b) => a - b);
  const at = (p: number) => cosines[Math.min(cosines.length - 1, Math.floor(p * cosines.length))]!;
  return { floor: Math.round(at(0.5) * 1000) / 1000, full: Math.round(at(0.999) * 1000) / 1000 };
}

export function scoresOf(
  asked: Asked[],
  built: Built,
  settings: RankSettings,
  mode: SearchMode,
  half?: Half,
) {
  return asked
    .filter((a) => half === undefined || a.half === half)
    .map((a) => score(a, built, settings, mode));
}

interface Run {
  built: Built;
  asked: Asked[];
}

/** Chooses the fusion, the vector weight and the update threshold on the tuning half, then the weak and noise floors. */
function tune(runs: Map<string, Run>, base: RankSettings, log: (line: string) => void) {
  let best = {
    value: -1,
    fusion: base.fusion,
    vectorWeight: base.vectorWeight,
    supersedeAbove: 1,
    newerWithin: 0,
  };
  for (const theta of THRESHOLDS) {
    for (const fusion of ['convex', 'rrf'] as const) {
      for (const vectorWeight of WEIGHTS) {
        for (const newerWithin of NEWER_WITHIN) {
          const settings = {
            ...base,
            fusion,
            vectorWeight,
            newerWithin,
            newerWithinNow: newerWithin,
            weakBelow: 0,
            hideBelow: 0,
          };
          let value = 0;
          for (const variant of VARIANTS) {
            const run = runs.get(`${theta}/${variant}`)!;
            value += objective(report(scoresOf(run.asked, run.built, settings, 'hybrid', 'tuning')));
          }
          if (value > best.value) best = { value, fusion, vectorWeight, supersedeAbove: theta, newerWithin };
        }
      }
    }
  }
  log(
    `memory-quality: tuned ${best.fusion} v=${best.vectorWeight} supersede>${best.supersedeAbove} newer within ${best.newerWithin}`,
  );
  const { supersedeAbove: _stale, ...rest } = base as RankSettings & { supersedeAbove?: number };
  const pooled = (settings: RankSettings) =>
    report(
      VARIANTS.flatMap((variant) => {
        const run = runs.get(`${best.supersedeAbove}/${variant}`)!;
        return scoresOf(run.asked, run.built, settings, 'hybrid', 'tuning');
      }),
    );
  // The window for questions about the present, once the rest is fixed (it moves only them).
  let newerWithinNow = best.newerWithin;
  let bestNow = -1;
  for (const now of NEWER_WITHIN_NOW.filter((w) => w >= best.newerWithin)) {
    const value = objective(
      pooled({ ...rest, ...best, newerWithinNow: now, weakBelow: 0, hideBelow: 0 } as RankSettings),
    );
    if (value > bestNow) [bestNow, newerWithinNow] = [value, now];
  }
  log(`memory-quality: newer within ${newerWithinNow} for questions about the present`);
  const chosen = (weakBelow: number, hideBelow: number): RankSettings => ({
    ...rest,
    fusion: best.fusion,
    vectorWeight: best.vectorWeight,
    newerWithin: best.newerWithin,
    newerWithinNow,
    weakBelow,
    hideBelow,
  });
  let weakBelow = 0;
  let bestJ = 0;
  for (let w = 0.05; w <= 0.8; w += 0.025) {
    const value = separation(pooled(chosen(w, 0)));
    if (value > bestJ) [bestJ, weakBelow] = [value, Math.round(w * 1000) / 1000];
  }
  // The noise floor: the highest that costs the tuning half no more than 0.01 of hit@5.
  const full = pooled(chosen(weakBelow, 0)).hitAt5;
  let hideBelow = 0;
  for (let h = 0.01; h <= weakBelow; h += 0.01) {
    if (pooled(chosen(weakBelow, h)).hitAt5 >= full - 0.01) hideBelow = Math.round(h * 100) / 100;
  }
  return { settings: chosen(weakBelow, hideBelow), supersedeAbove: best.supersedeAbove };
}

export async function runMemoryQualitySection(
  provider: Provider,
  log: (line: string) => void,
): Promise<void> {
  const started = Date.now();
  const conversations = loadConversations();
  const questions = conversations.flatMap((c) => c.questions);
  const texts = [
    ...conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => t.content))),
    ...questions.map((q) => asEmbedded(q.question)),
  ];
  log(
    `memory-quality: ${conversations.length} conversations, ${questions.length} questions, embedder ${provider}`,
  );
  const { vectors, model } = await embedTexts({ provider } as never, texts, log);
  const base = {
    ...(SEARCH_DEFAULTS as Record<string, RankSettings>)[provider]!,
    ...calibrate(conversations, vectors),
  };

  const sqlite = await openStore('sqlite');
  const results: Record<string, unknown> = {};
  try {
    const runs = new Map<string, Run>();
    for (const theta of THRESHOLDS) {
      for (const variant of VARIANTS) {
        const built = await buildKeys(sqlite.store, conversations, variant, vectors, model, theta);
        runs.set(`${theta}/${variant}`, {
          built,
          asked: await ask(sqlite.store, built, conversations, vectors, 'hybrid', variant),
        });
      }
    }
    const chosen = tune(runs, base, log);
    results.chosen = chosen;
    for (const kind of STORES) {
      const opened = kind === 'sqlite' ? sqlite : await openStore('postgres');
      try {
        for (const variant of VARIANTS) {
          const built =
            kind === 'sqlite'
              ? runs.get(`${chosen.supersedeAbove}/${variant}`)!.built
              : await buildKeys(opened.store, conversations, variant, vectors, model, chosen.supersedeAbove);
          for (const mode of ['hybrid', 'keyword'] as const) {
            const asked =
              kind === 'sqlite' && mode === 'hybrid'
                ? runs.get(`${chosen.supersedeAbove}/${variant}`)!.asked
                : await ask(opened.store, built, conversations, vectors, mode, variant);
            for (const half of ['tuning', 'heldout'] as const) {
              results[`${kind}/${variant}/${mode}/${half}`] = report(
                scoresOf(asked, built, chosen.settings, mode, half),
              );
            }
          }
        }
      } finally {
        if (kind === 'postgres') await opened.close();
      }
    }
  } finally {
    await sqlite.close();
  }
  const overlaps = conversations
    .flatMap((c) => c.questions.filter((q) => q.evidence.length > 0).map((q) => overlap(c, q)))
    .sort((a, b) => a - b);
  const out = {
    run: {
      date: new Date().toISOString(),
      seconds: Math.round((Date.now() - started) / 1000),
      machine: machineInfo(),
    },
    embedder: model,
    set: {
      conversations: conversations.length,
      questions: questions.length,
      turns: texts.length - questions.length,
      medianContentWordOverlap: overlaps[Math.floor(overlaps.length / 2)] ?? 0,
    },
    calibration: { floor: base.floor, full: base.full },
    ...results,
  };
  printTable(out as unknown as Record<string, Report>);
  const file = join(
    benchRoot,
    'bench',
    'results',
    provider === 'local' ? 'memory-quality.json' : `memory-quality-${provider}.json`,
  );
  if (STORES.length < 2) return log('memory-quality: one store only; results file left as it was');
  await writeFile(file, `${JSON.stringify(out, null, 2)}\n`);
  log(`wrote ${file}`);
}

function printTable(out: Record<string, Report>): void {
  const rows = Object.entries(out).filter(([name]) => name.split('/').length === 4);
  console.log(
    '| store/variant/mode/half | hit@1 | hit@5 | MRR | newest first | abstain P / R / false alarm | false empty | p50 / p99 ms |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const [name, r] of rows) {
    console.log(
      `| ${name} | ${r.hitAt1} | ${r.hitAt5} | ${r.mrr} | ${r.newestFirst ?? '-'} | ${r.abstention.precision} / ${r.abstention.recall} / ${r.abstention.falseAlarm} | ${r.falseEmpty} | ${r.p50Ms} / ${r.p99Ms} |`,
    );
  }
}
