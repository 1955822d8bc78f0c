import { eventOrder } from './store/common.ts';
import { textStems } from './store/text.ts';
import type { Candidate, MemoryRecord, SearchCandidates } from './store/types.ts';
import { statesChange } from './updates.ts';

/**
 * How a search's candidates become an answer, the same for both stores.
 *
 * Every candidate gets a `relevance` in [0, 1]:
 *   relevance = v · semantic + (1 − v) · keyword
 * - `semantic` is the cosine to the query rescaled per embedder: `floor` (about what two
 *   unrelated texts score) maps to 0 and `full` (a close paraphrase) to 1, clipped.
 * - `keyword` is the share of the query's content words the memory contains, each word
 *   weighted by its idf within the caller's own memories: 1 means every word is there.
 * Both parts are absolute (not rescaled per query), so relevance can say "weak" and mean
 * it across queries. Hits are ordered by relevance (`convex`) or by weighted reciprocal
 * rank of the two arms (`rrf`); `npm run bench -- memory-quality` measured both.
 */
export interface RankSettings {
  fusion: 'convex' | 'rrf';
  /** v above: the semantic part's share (convex), or the vector arm's RRF weight against 1 − v. */
  vectorWeight: number;
  /** Cosine → semantic rescaling for the embedder in use. */
  floor: number;
  full: number;
  /** Below this relevance a hit is weak: the answer may not be stored. */
  weakBelow: number;
  /**
   * A candidate is noise, left out unless include_weak, when neither arm gives it this much:
   * its semantic part and its keyword part are both under it. Judged per arm, not on the
   * blend, so a hybrid search never hides what its own vector arm would show: a blended
   * floor hid answers whose words were everyday ones (keyword 0) while their meaning was
   * plain, and left answerable questions empty where `mode: "vector"` answered them.
   */
  hideBelow: number;
  /**
   * Matches within this much of the best one left are taken newest first (0 turns it off).
   * When a fact changed, the old and the new statement answer the same question about
   * equally well; the newer one is the current fact. A clearly better match still wins.
   */
  newerWithin: number;
  /**
   * The same window for a query that asks about the present ("now", "currently", "these
   * days": see asksAboutNow). Such a question wants the latest statement, so a newer match
   * may lead from further behind; past the window the better match still wins.
   */
  newerWithinNow: number;
  /**
   * The window for a newer match that says something changed ("now", "moved", "sold": see
   * statesChange), and the same for a question about the present. Such a memory is likely
   * the new value of a fact the older match states, so it may lead from further behind
   * than a merely newer one, which is not lifted past newerWithin. Unset: newerWithin(Now).
   */
  changedWithin?: number;
  changedWithinNow?: number;
}

export interface RankRequest {
  stems: string[];
  /** `vector` ranks by meaning alone and `keyword` by words alone; `hybrid` (the default) by both. */
  mode?: 'hybrid' | 'keyword' | 'vector';
  limit: number;
  /** Explicit cosine floor: candidates only the vector arm found, under it, are dropped. */
  minScore?: number;
  includeWeak: boolean;
  /** Optional recency boost (off unless asked): at most `weight`, halving every `halfLifeDays`. */
  recency?: { halfLifeDays: number; weight: number };
  /** Vector-arm weights given by the caller instead of the settings' split. */
  weights?: { vector: number; keyword: number };
  /** The query asks for the current state of something (newerWithinNow applies). */
  asksNow?: boolean;
}

export interface RankedHit {
  memory: MemoryRecord;
  relevance: number;
  semantic: number | null;
  keyword: number;
  cosine: number | null;
  keywordScore: number | null;
  source: 'vector' | 'keyword' | 'both';
  weak: boolean;
  /** The reranker's score, when the rerank stage reordered this hit (rerank/stage.ts). */
  rerankScore?: number;
}

export interface Ranked {
  hits: RankedHit[];
  /** The best candidate's relevance, hidden ones included; null when nothing was found. */
  best: number | null;
  /** The best candidate is weak (or there is none): an agent should not claim to know. */
  weak: boolean;
  /** Candidates left out as noise (include_weak shows them). */
  hidden: number;
}

const RRF_K = 60;
/** Recency can lift a hit by at most this much, and never past a hit of the stronger class. */
export const MAX_RECENCY_WEIGHT = 0.1;
const DAY_MS = 86_400_000;

/** BM25's idf, kept positive (a word in every memory still counts a little). */
function idf(total: number, df: number): number {
  return Math.log(1 + (Math.max(total, df) - df + 0.5) / (df + 0.5));
}

/**
 * Each candidate's stems by its content hash. Keyword relevance asks for them on every search
 * that returns the memory, and splitting and stemming the text again was about a tenth of a
 * keyword search's CPU (decision 0126). The hash is of the text normalised as the words
 * see it (NFC, whitespace folded), so equal hashes have equal stems. Bounded by the stems
 * held, not the sets: a long memory holds a thousand distinct stems or more. Emptied when
 * full, like the stem map it sits on.
 */
const STEM_SETS = new Map<string, ReadonlySet<string>>();
const MAX_HELD_STEMS = 200_000;
let heldStems = 0;

function stemSet(content: string, contentHash: string): ReadonlySet<string> {
  let present = STEM_SETS.get(contentHash);
  if (present === undefined) {
    present = new Set(textStems(content));
    if (heldStems + present.size > MAX_HELD_STEMS) {
      STEM_SETS.clear();
      heldStems = 0;
    }
    // A set larger than the whole budget is used for this search and not kept.
    if (present.size <= MAX_HELD_STEMS) {
      STEM_SETS.set(contentHash, present);
      heldStems += present.size;
    }
  }
  return present;
}

export function keywordRelevance(
  content: string,
  contentHash: string,
  stems: readonly string[],
  documentFrequency: Readonly<Record<string, number>>,
  total: number,
): number {
  if (stems.length === 0) return 0;
  const present = stemSet(content, contentHash);
  let all = 0;
  let found = 0;
  for (const stem of stems) {
    const weight = idf(total, documentFrequency[stem] ?? 0);
    all += weight;
    if (present.has(stem)) found += weight;
  }
  return all > 0 ? found / all : 0;
}

/** The cosine on the embedder's scale, not clipped (ordering uses this; relevance clips it). */
function scaled(cosine: number, settings: RankSettings): number {
  return (cosine - settings.floor) / (settings.full - settings.floor);
}

export function semanticRelevance(cosine: number | null, settings: RankSettings): number | null {
  return cosine === null ? null : Math.min(1, Math.max(0, scaled(cosine, settings)));
}

function splitOf(settings: RankSettings, request: RankRequest): { v: number; k: number } {
  if (request.mode === 'vector') return { v: 1, k: 0 };
  if (request.mode === 'keyword') return { v: 0, k: 1 };
  if (!request.weights) return { v: settings.vectorWeight, k: 1 - settings.vectorWeight };
  const sum = request.weights.vector + request.weights.keyword;
  return sum > 0 ? { v: request.weights.vector / sum, k: request.weights.keyword / sum } : { v: 0, k: 1 };
}

function score(candidate: Candidate, found: SearchCandidates, request: RankRequest, settings: RankSettings) {
  const keyword =
    request.mode === 'vector'
      ? 0
      : keywordRelevance(
          candidate.memory.content,
          candidate.contentHash,
          request.stems,
          found.documentFrequency,
          found.total,
        );
  const semantic = semanticRelevance(candidate.cosine, settings);
  const { v, k } = splitOf(settings, request);
  // A memory not embedded yet (or a search without a query vector) is judged by its words alone.
  const relevance = semantic === null ? keyword : v * semantic + k * keyword;
  // Order by the unclipped scale, so memories past either end of it still rank by cosine.
  const order = candidate.cosine === null ? keyword : v * scaled(candidate.cosine, settings) + k * keyword;
  const rrf =
    (candidate.vectorRank === null ? 0 : v / (RRF_K + candidate.vectorRank)) +
    (candidate.keywordRank === null ? 0 : k / (RRF_K + candidate.keywordRank));
  return { keyword, semantic, relevance, order, rrf };
}

export function rankCandidates(
  found: SearchCandidates,
  request: RankRequest,
  settings: RankSettings,
  now: number,
): Ranked {
  const minScore = request.minScore;
  const scored = found.candidates.map((candidate) => {
    const parts = score(candidate, found, request, settings);
    // How it matched: by meaning when its cosine clears the embedder's floor (and an
    // explicit min_score), by words when it holds any of the query's words.
    const inVector =
      request.mode !== 'keyword' &&
      (parts.semantic ?? 0) > 0 &&
      (minScore === undefined || (candidate.cosine ?? 0) >= minScore);
    const inKeyword = parts.keyword > 0;
    const hit: RankedHit = {
      memory: candidate.memory,
      relevance: round(parts.relevance),
      semantic: parts.semantic === null ? null : round(parts.semantic),
      keyword: round(parts.keyword),
      cosine: candidate.cosine === null ? null : round(candidate.cosine),
      keywordScore: candidate.keywordScore,
      source: inVector && inKeyword ? 'both' : inKeyword ? 'keyword' : 'vector',
      weak: parts.relevance < settings.weakBelow,
    };
    const age = Math.max(0, now - candidate.memory.occurredAt) / DAY_MS;
    const boost = request.recency
      ? Math.min(request.recency.weight, MAX_RECENCY_WEIGHT) * 0.5 ** (age / request.recency.halfLifeDays)
      : 0;
    const order = settings.fusion === 'rrf' ? parts.rrf : parts.order;
    // The strongest single arm: what the noise floor judges (see hideBelow).
    const arm = Math.max(parts.semantic ?? 0, parts.keyword);
    return {
      hit,
      order: order + (settings.fusion === 'rrf' ? boost / RRF_K : boost),
      raw: parts.relevance,
      arm,
    };
  });
  const allowed = scored.filter(
    ({ hit }) => minScore === undefined || hit.keyword > 0 || (hit.cosine ?? 0) >= minScore,
  );
  // Strong before weak whatever the boost; then the fused order; then more of the query's
  // words (the keyword arm's part when the vector share is 1); then the newer memory (event time).
  allowed.sort(
    (a, b) =>
      Number(a.hit.weak) - Number(b.hit.weak) ||
      b.order - a.order ||
      b.hit.keyword - a.hit.keyword ||
      eventOrder(b.hit.memory, a.hit.memory),
  );
  const plain = request.asksNow
    ? Math.max(settings.newerWithin, settings.newerWithinNow)
    : settings.newerWithin;
  const changed = Math.max(
    plain,
    (request.asksNow ? settings.changedWithinNow : settings.changedWithin) ?? plain,
  );
  const scale = settings.fusion === 'rrf' ? 1 / RRF_K : 1;
  newestAmongEquals(allowed, plain * scale, changed * scale);
  const best = scored.length === 0 ? null : Math.max(...scored.map((s) => s.raw));
  // An explicit min_score is the caller's own floor: it replaces the noise floor.
  const shown =
    request.includeWeak || minScore !== undefined
      ? allowed
      : allowed.filter((s) => s.arm >= settings.hideBelow);
  return {
    hits: shown.slice(0, request.limit).map((s) => s.hit),
    best: best === null ? null : round(best),
    weak: best === null || best < settings.weakBelow,
    hidden: allowed.length - shown.length,
  };
}

/**
 * Reorders sorted candidates in place: each next place goes to the newest candidate whose
 * order is within the window of the best one left (and of the same strong/weak class), so
 * a near tie between an old and a new statement of a fact goes to the new one. A candidate
 * that says something changed gets the `changed` window, any other the `plain` one.
 * Quadratic in the candidates, which are at most a few hundred.
 */
function newestAmongEquals(
  sorted: { hit: RankedHit; order: number }[],
  plain: number,
  changed: number,
): void {
  const widest = Math.max(plain, changed);
  if (widest <= 0) return;
  const saysChange = new Map<RankedHit, boolean>();
  const windowOf = (hit: RankedHit) => {
    if (changed <= plain) return plain;
    let says = saysChange.get(hit);
    if (says === undefined) {
      says = statesChange(hit.memory.content);
      saysChange.set(hit, says);
    }
    return says ? changed : plain;
  };
  for (let i = 0; i < sorted.length; i++) {
    const lead = sorted[i]!;
    let pick = i;
    for (let j = i + 1; j < sorted.length; j++) {
      const other = sorted[j]!;
      const gap = lead.order - other.order;
      if (gap > widest) break;
      if (gap > windowOf(other.hit)) continue;
      if (eventOrder(other.hit.memory, sorted[pick]!.hit.memory) > 0) pick = j;
    }
    if (pick !== i) sorted.splice(i, 0, ...sorted.splice(pick, 1));
  }
}

function round(n: number): number {
  return Math.round(n * 10_000) / 10_000;
}
