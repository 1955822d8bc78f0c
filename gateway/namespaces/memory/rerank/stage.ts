/**
 * The rerank stage: after rankCandidates, the first `topN` hits shown are scored again by a
 * cross-encoder (over HTTP, or local in the embedding pool) and reordered by that score.
 *
 * What it may change is the order of those hits, nothing else: it sees only hits the first
 * stage shows (a hidden candidate stays hidden), never drops one, and leaves each hit's
 * `relevance` and `weak`, the result's `weak`, `best_relevance` and `note` as the first
 * stage judged them. Those are on the embedder's calibrated scale, and they are what says
 * "the answer may not be stored"; a reranker's scores are on its own model's scale, which
 * this gateway has not calibrated (docs/decisions/0801-memory-rerank-stage.md).
 *
 * Any failure (a bad setting, a timeout, an HTTP error, an answer of the wrong shape, a
 * NaN or missing score, an index out of range) leaves the first-stage order and says why in
 * `degraded`; a search never fails because of its reranker.
 */
import type { Logger } from 'pino';
import { untilAborted } from '../../../../shared/until-aborted.ts';
import { startDeadline } from '../../../upstream/deadline.ts';
import type { Embedder } from '../embeddings/embedder.ts';
import type { Ranked } from '../ranking.ts';
import { type RerankerConfig, type RerankSetup, rerankInfo } from './config.ts';
import { httpReranker } from './http.ts';
import { RerankFailure, type RerankOutcome, type ScoreDocuments } from './outcome.ts';

/**
 * Characters of a memory sent to the reranker. Cross-encoders read at most 512 tokens (about
 * 2,000 characters of English) and truncate the rest; this bounds the request, not the model.
 */
const DOCUMENT_CHARS = 4000;

function onnxReranker(config: Extract<RerankerConfig, { kind: 'onnx' }>, embedder: Embedder): ScoreDocuments {
  // A timed-out rerank still runs to its end (below), so searches arriving faster than the
  // pool scores them would queue ever more work whose answers nobody waits for: a 30-pair
  // MiniLM-L6 rerank is about 330 ms of CPU. Past one running and one queued per thread, a
  // search skips reranking at once instead.
  const maxInFlight = config.threads * 2;
  let inFlight = 0;
  return async (query, documents, signal) => {
    if (inFlight >= maxInFlight)
      throw new RerankFailure('busy', 'the local reranker is busy with earlier searches');
    inFlight++;
    const work = embedder.rerank(config.dir, query, documents).finally(() => {
      inFlight--;
    });
    let result: Awaited<ReturnType<Embedder['rerank']>>;
    // The deadline ends the wait, not the model run (embedder.ts says why a run is never cut).
    const within = startDeadline(signal, config.timeoutMs);
    try {
      result = await untilAborted(work, within.signal);
    } catch (error) {
      if (signal.aborted) throw new RerankFailure('cancelled', 'the search was cancelled');
      const name = (error as Error).name;
      if (name === 'TimeoutError' || name === 'AbortError')
        throw new RerankFailure('timeout', `the local reranker did not answer within ${config.timeoutMs} ms`);
      throw new RerankFailure('failed', 'the local reranker failed');
    } finally {
      within.clear();
    }
    if (!result.ok) throw new RerankFailure('failed', result.message);
    if (result.scores.length !== documents.length || result.scores.some((s) => !Number.isFinite(s)))
      throw new RerankFailure('bad_score', 'the local reranker gave a NaN or missing score');
    return result.scores;
  };
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;

export class RerankStage {
  private readonly score: ScoreDocuments | null;

  constructor(
    readonly setup: RerankSetup,
    embedder: Embedder,
    private readonly log: Logger,
    private readonly count: (outcome: RerankOutcome) => void = () => {},
  ) {
    const { config } = setup;
    if (!config) this.score = null;
    else if (config.kind === 'http') this.score = httpReranker(config, log);
    else this.score = onnxReranker(config, embedder);
  }

  /** How many first-stage hits to hand over: 0 when reranking is off or cannot run. */
  get topN(): number {
    return this.setup.config?.topN ?? 0;
  }

  info() {
    return rerankInfo(this.setup);
  }

  /** `ranked` holds at least `topN` hits when there are that many; the answer holds `limit`. */
  async apply(
    query: string,
    ranked: Ranked,
    limit: number,
    signal: AbortSignal,
  ): Promise<{ ranked: Ranked; degraded?: string }> {
    const firstStage = { ...ranked, hits: ranked.hits.slice(0, limit) };
    if (this.setup.requested === 'none') return { ranked: firstStage };
    if (!this.score) {
      this.count('settings_invalid');
      return {
        ranked: firstStage,
        degraded: `reranking is off (SETTINGS_INVALID: ${this.setup.problems.join('; ')}); hits are in first-stage order`,
      };
    }
    const head = ranked.hits.slice(0, this.topN);
    // One hit has no order to change: no call, no wait.
    if (head.length < 2) return { ranked: firstStage };
    let scores: number[];
    try {
      scores = await this.score(
        query,
        head.map((hit) => hit.memory.content.slice(0, DOCUMENT_CHARS)),
        signal,
      );
    } catch (error) {
      const failure =
        error instanceof RerankFailure ? error : new RerankFailure('failed', 'the reranker failed');
      // Debug, not warn: a reranker down for an hour would log every search; the counter says it.
      this.log.debug({ outcome: failure.outcome, err: error }, 'rerank skipped');
      this.count(failure.outcome);
      return {
        ranked: firstStage,
        degraded: `reranking skipped: ${failure.message}; hits are in first-stage order`,
      };
    }
    this.count('ok');
    // Equal scores keep the first stage's order.
    const reordered = head
      .map((hit, i) => ({ hit: { ...hit, rerankScore: round(scores[i]!) }, score: scores[i]!, i }))
      .sort((a, b) => b.score - a.score || a.i - b.i)
      .map(({ hit }) => hit);
    return { ranked: { ...ranked, hits: [...reordered, ...ranked.hits.slice(head.length)].slice(0, limit) } };
  }
}
