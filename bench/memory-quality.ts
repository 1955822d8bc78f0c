/**
 * `npm run bench -- memory-quality [--embedder local|minilm] [--reranker <url|dir>]`: retrieval
 * quality on two sets written for this project (see evalSets in memory-quality-set.ts),
 * LongMemEval-style: every turn stored as one memory under its conversation's key, questions
 * asked with the query alone. Constants are chosen on the tuning halves (memory-quality-tune.ts)
 * and both halves are reported per set, for SQLite and Postgres, user turns only and all turns:
 * the default (hybrid) beside its own vector and keyword arms and plain cosine over the same
 * vectors.
 * With --reranker, 'reranked' rows (the default's first stage, then the rerank stage) are
 * added beside the default's, into memory-quality[-<embedder>]-reranked.json.
 * Results: bench/results/memory-quality[-<embedder>].json.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { asksAboutNow, firstPersonQuery } from '../gateway/namespaces/memory/query-voice.ts';
import { type Ranked, type RankSettings, rankCandidates } from '../gateway/namespaces/memory/ranking.ts';
import { searchNote } from '../gateway/namespaces/memory/service.ts';
import { SEARCH_DEFAULTS } from '../gateway/namespaces/memory/settings.ts';
import { queryWords } from '../gateway/namespaces/memory/store/text.ts';
import type { MemoryStore, SearchCandidates, SearchMode } from '../gateway/namespaces/memory/store/types.ts';
import { benchRoot } from './child.ts';
import { machineInfo } from './machine.ts';
import { type Built, buildKeys, embedTexts, openStore } from './memory-quality-build.ts';
import { type BenchReranker, benchReranker } from './memory-quality-rerank.ts';
import {
  type Conversation,
  evalSets,
  type Half,
  halfOf,
  loadConversations,
  overlap,
  type QuestionScore,
  type Report,
  report,
  type Variant,
} from './memory-quality-set.ts';
import { calibrate, type Mode, type Run, THRESHOLDS, tune } from './memory-quality-tune.ts';

type Provider = 'local' | 'minilm';
/** MEMORY_QUALITY_STORES=sqlite skips the Postgres pass (quick iterations; reports need both). */
const STORES = (['sqlite', 'postgres'] as const).filter(
  (kind) => !process.env.MEMORY_QUALITY_STORES || process.env.MEMORY_QUALITY_STORES.split(',').includes(kind),
);
const LIMIT = 10;
/** MEMORY_QUALITY_TIMES=undated: every turn written a second apart, no session dates (see turnTime). */
const UNDATED = process.env.MEMORY_QUALITY_TIMES === 'undated';
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

/**
 * Plain cosine over the same vectors: the vector arm's candidates by cosine alone, nothing
 * hidden, no update window. The simplest arm a default must not lose to.
 */
function plainCosine(found: SearchCandidates): Ranked {
  const hits = found.candidates
    .filter((c) => c.cosine !== null)
    .sort((a, b) => b.cosine! - a.cosine!)
    .slice(0, LIMIT)
    .map((c) => ({ memory: c.memory, relevance: c.cosine!, semantic: c.cosine, keyword: 0 }));
  return { hits: hits as Ranked['hits'], best: hits[0]?.relevance ?? null, weak: false, hidden: 0 };
}

function score(
  a: Asked,
  built: Built,
  settings: RankSettings,
  mode: Mode | 'cosine',
  reranked?: { ranked: Ranked; ms: number },
): QuestionScore {
  const started = performance.now();
  const ranked =
    reranked?.ranked ??
    (mode === 'cosine'
      ? plainCosine(a.found)
      : rankCandidates(
          a.found,
          { stems: a.stems, mode, limit: LIMIT, includeWeak: false, asksNow: a.asksNow },
          settings,
          Date.now(),
        ));
  const ms = a.ms + (reranked?.ms ?? performance.now() - started);
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

const MODES: (Mode | 'cosine')[] = ['hybrid', 'vector', 'keyword', 'cosine'];
const VARIANTS: Variant[] = ['user', 'all'];

/** One built store of one set and variant, asked in every mode. */
async function buildRun(
  store: MemoryStore,
  set: { name: string; conversations: Conversation[] },
  variant: Variant,
  vectors: Map<string, Float32Array>,
  model: { model: string; dimensions: number },
  theta: number,
): Promise<Run & { asked: Map<Mode | 'cosine', Asked[]> }> {
  const built = await buildKeys(store, set.conversations, variant, vectors, model, theta);
  const asked = new Map<Mode | 'cosine', Asked[]>();
  for (const mode of ['hybrid', 'vector', 'keyword'] as const)
    asked.set(mode, await ask(store, built, set.conversations, vectors, mode, variant));
  asked.set('cosine', asked.get('vector')!);
  return {
    set: set.name,
    variant,
    built,
    asked,
    score: (settings, mode, half) =>
      asked
        .get(mode)!
        .filter((a) => half === undefined || a.half === half)
        .map((a) => score(a, built, settings, mode)),
  };
}

/** The default's first stage, then the rerank stage as the service runs it: the 'reranked' rows. */
async function rerankedScores(
  reranker: BenchReranker,
  run: Awaited<ReturnType<typeof buildRun>>,
  settings: RankSettings,
  half: Half,
): Promise<QuestionScore[]> {
  const scores: QuestionScore[] = [];
  for (const a of run.asked.get('hybrid')!.filter((asked) => asked.half === half)) {
    const started = performance.now();
    const limit = Math.max(LIMIT, reranker.stage.topN);
    const first = rankCandidates(
      a.found,
      { stems: a.stems, mode: 'hybrid', limit, includeWeak: false, asksNow: a.asksNow },
      settings,
      Date.now(),
    );
    const { ranked } = await reranker.stage.apply(
      a.question.question,
      first,
      LIMIT,
      new AbortController().signal,
    );
    scores.push(score(a, run.built, settings, 'hybrid', { ranked, ms: performance.now() - started }));
  }
  return scores;
}

export async function runMemoryQualitySection(
  provider: Provider,
  log: (line: string) => void,
  options: { reranker?: string } = {},
): Promise<void> {
  const reranker = options.reranker ? benchReranker(options.reranker) : null;
  const started = Date.now();
  const sets = evalSets().map((set) => ({ ...set, conversations: loadConversations(set.dir) }));
  const conversations = sets.flatMap((set) => set.conversations);
  const questions = conversations.flatMap((c) => c.questions);
  const texts = [
    ...conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => t.content))),
    ...questions.map((q) => asEmbedded(q.question)),
  ];
  log(
    `memory-quality: ${sets.map((s) => `${s.name} ${s.conversations.length}`).join(', ')} conversations, ${questions.length} questions, embedder ${provider}`,
  );
  const { vectors, model } = await embedTexts({ provider } as never, texts, log);
  const base = {
    ...(SEARCH_DEFAULTS as Record<string, RankSettings>)[provider]!,
    ...calibrate(conversations, vectors, asEmbedded),
  };

  const sqlite = await openStore('sqlite');
  const results: Record<string, unknown> = {};
  try {
    const runs = new Map<number, Awaited<ReturnType<typeof buildRun>>[]>();
    // Undated: the shipped constants are measured, not chosen again (the order of writes
    // is all that changes, so the tuning question was answered on the dated runs).
    const shipped = SEARCH_DEFAULTS[provider];
    for (const theta of UNDATED ? [shipped.supersedeAbove] : THRESHOLDS) {
      const built = [];
      for (const set of sets)
        for (const variant of VARIANTS)
          built.push(await buildRun(sqlite.store, set, variant, vectors, model, theta));
      runs.set(theta, built);
    }
    const chosen = UNDATED
      ? { settings: shipped as RankSettings, supersedeAbove: shipped.supersedeAbove, refused: 0 }
      : tune((theta) => runs.get(theta)!, base, log);
    results.chosen = chosen;
    if (process.env.MEMORY_QUALITY_EXPLAIN) explain(runs.get(chosen.supersedeAbove)!, chosen.settings, log);
    for (const kind of STORES) {
      const opened = kind === 'sqlite' ? sqlite : await openStore('postgres');
      try {
        for (const set of sets) {
          for (const variant of VARIANTS) {
            const run =
              kind === 'sqlite'
                ? runs.get(chosen.supersedeAbove)!.find((r) => r.set === set.name && r.variant === variant)!
                : await buildRun(opened.store, set, variant, vectors, model, chosen.supersedeAbove);
            for (const mode of MODES) {
              for (const half of ['tuning', 'heldout'] as const) {
                const scores = run.asked
                  .get(mode)!
                  .filter((a) => a.half === half)
                  .map((a) => score(a, run.built, chosen.settings, mode));
                results[`${set.name}/${kind}/${variant}/${mode}/${half}`] = report(scores);
              }
            }
            for (const half of ['tuning', 'heldout'] as const)
              if (reranker)
                results[`${set.name}/${kind}/${variant}/reranked/${half}`] = report(
                  await rerankedScores(reranker, run, chosen.settings, half),
                );
          }
        }
      } finally {
        if (kind === 'postgres') await opened.close();
      }
    }
  } finally {
    await sqlite.close();
    await reranker?.close();
  }
  if (reranker?.failures.size)
    log(
      `memory-quality: rerank failures kept first-stage order: ${JSON.stringify(Object.fromEntries(reranker.failures))}`,
    );
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
    sets: Object.fromEntries(
      sets.map((set) => [
        set.name,
        {
          conversations: set.conversations.length,
          questions: set.conversations.reduce((n, c) => n + c.questions.length, 0),
          turns: set.conversations.reduce(
            (n, c) => n + c.sessions.reduce((m, s) => m + s.turns.length, 0),
            0,
          ),
        },
      ]),
    ),
    medianContentWordOverlap: overlaps[Math.floor(overlaps.length / 2)] ?? 0,
    calibration: { floor: base.floor, full: base.full },
    ...(reranker ? { reranker: reranker.stage.info() } : {}),
    ...results,
  };
  printTable(out as unknown as Record<string, Report>);
  const file = join(
    benchRoot,
    'bench',
    'results',
    `memory-quality${provider === 'local' ? '' : `-${provider}`}${UNDATED ? '-undated' : ''}.json`,
  );
  if (STORES.length < 2) return log('memory-quality: one store only; results file left as it was');
  // A reranked run is the default's rows plus its own: kept apart, so the default's file stays the default's.
  if (reranker) return writeReranked(file, out, log);
  await writeFile(file, `${JSON.stringify(out, null, 2)}\n`);
  log(`wrote ${file}`);
}

/**
 * MEMORY_QUALITY_EXPLAIN=1: the tuning half's questions whose evidence the default ranks
 * differently from its vector arm, with the query words the keyword arm matched. Tuning
 * half only: the held-out half is reported, never looked into.
 */
function explain(
  runs: Awaited<ReturnType<typeof buildRun>>[],
  settings: RankSettings,
  log: (line: string) => void,
) {
  for (const run of runs) {
    const hybrid = run.score(settings, 'hybrid', 'tuning');
    const vector = run.score(settings, 'vector', 'tuning');
    const asked = run.asked.get('hybrid')!.filter((a) => a.half === 'tuning');
    hybrid.forEach((h, i) => {
      const v = vector[i]!;
      if (h.rank === v.rank || !h.answerable) return;
      const a = asked[i]!;
      log(
        `explain ${run.set}/${run.variant} ${a.question.id} [${a.question.type}] hybrid ${h.rank} vector ${v.rank}: ${a.question.question} (stems ${a.stems.join(' ')})`,
      );
    });
  }
}

function printTable(out: Record<string, Report>): void {
  const rows = Object.entries(out).filter(([name]) => name.split('/').length === 5);
  console.log(
    '| set/store/variant/mode/half | hit@1 | hit@5 | MRR | newest first | abstain P / R / false alarm | false empty | p50 / p99 ms |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const [name, r] of rows) {
    console.log(
      `| ${name} | ${r.hitAt1} | ${r.hitAt5} | ${r.mrr} | ${r.newestFirst ?? '-'} | ${r.abstention.precision} / ${r.abstention.recall} / ${r.abstention.falseAlarm} | ${r.falseEmpty} | ${r.p50Ms} / ${r.p99Ms} |`,
    );
  }
}

async function writeReranked(file: string, out: object, log: (line: string) => void): Promise<void> {
  const target = file.replace(/\.json$/, '-reranked.json');
  await writeFile(target, `${JSON.stringify(out, null, 2)}\n`);
  log(`wrote ${target}`);
}
