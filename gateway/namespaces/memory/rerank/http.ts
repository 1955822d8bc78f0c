/**
 * A reranker behind HTTP, in the two shapes servers speak:
 *
 * - `cohere`: POST {model, query, documents, top_n} → {results: [{index, relevance_score}]},
 *   what Cohere, Jina, vLLM and Infinity all accept at their /rerank (or /v1/rerank, /v2/rerank).
 * - `tei`: text-embeddings-inference's POST /rerank {query, texts} → [{index, score}].
 *
 * Calls go through the gateway's one upstream HTTP layer (deadline, response cap, redirects
 * refused, logs without headers or bodies). No retry: a search waits on this call, and a
 * second try would double the wait that falling back to the first stage avoids.
 */
import type { Logger } from 'pino';
import { UpstreamError } from '../../../upstream/errors.ts';
import { createUpstreamHttp } from '../../../upstream/http.ts';
import { registerSecret } from '../../../upstream/redact.ts';
import type { RerankerConfig } from './config.ts';
import { RerankFailure, type ScoreDocuments } from './outcome.ts';

type HttpConfig = Extract<RerankerConfig, { kind: 'http' }>;

const SHAPES = {
  cohere: { list: '{results: [{index, relevance_score}]}', score: 'relevance_score' },
  tei: { list: '[{index, score}]', score: 'score' },
} as const;

/** A failed call as the stage reports it: never the upstream's own words, which are untrusted. */
function failureOf(error: unknown, timeoutMs: number): RerankFailure {
  if (!(error instanceof UpstreamError))
    return new RerankFailure('unreachable', 'the reranker could not be reached');
  if (error.code === 'TIMEOUT')
    return new RerankFailure('timeout', `the reranker did not answer within ${timeoutMs} ms`);
  if (error.code === 'CANCELLED') return new RerankFailure('cancelled', 'the search was cancelled');
  const status = error.status;
  if (status !== undefined && (status < 200 || status >= 300))
    return new RerankFailure('http_status', `the reranker answered HTTP ${status}`);
  if (status !== undefined) return new RerankFailure('bad_shape', 'the reranker sent an answer over 1 MiB');
  return new RerankFailure('unreachable', 'the reranker could not be reached');
}

/**
 * JSON, or JSON with bare NaN / Infinity scores (Python's json module writes them, so a
 * server whose model overflowed sends them): those read as null, which the score check then
 * names, rather than as a body that is "not JSON".
 */
function parseLenient(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const fixed = text.replace(/(:\s*)-?(?:NaN|Infinity)\b/g, '$1null');
    try {
      return JSON.parse(fixed);
    } catch {
      throw new RerankFailure('bad_shape', 'the reranker answered with a body that is not JSON');
    }
  }
}

/** One finite score per document, by index; anything else is a named failure. */
export function scoresOf(api: HttpConfig['api'], body: unknown, count: number): number[] {
  const shape = SHAPES[api];
  const list = api === 'cohere' ? (body as { results?: unknown } | null)?.results : body;
  if (!Array.isArray(list))
    throw new RerankFailure('bad_shape', `the reranker's answer is not the ${api} shape ${shape.list}`);
  const scores: (number | undefined)[] = new Array(count).fill(undefined);
  for (const item of list) {
    const index = (item as { index?: unknown } | null)?.index;
    if (typeof index !== 'number' || !Number.isInteger(index))
      throw new RerankFailure('bad_shape', `the reranker's answer is not the ${api} shape ${shape.list}`);
    if (index < 0 || index >= count)
      throw new RerankFailure(
        'bad_index',
        `the reranker named document ${index} of ${count} (index out of range)`,
      );
    if (scores[index] !== undefined)
      throw new RerankFailure('bad_index', `the reranker scored document ${index} twice`);
    const score = (item as Record<string, unknown>)[shape.score];
    if (typeof score !== 'number' || !Number.isFinite(score))
      throw new RerankFailure('bad_score', `the reranker's score for document ${index} is NaN or missing`);
    scores[index] = score;
  }
  const unscored = scores.indexOf(undefined);
  if (unscored >= 0)
    throw new RerankFailure(
      'bad_score',
      `the reranker gave no score for document ${unscored} (missing score)`,
    );
  return scores as number[];
}

export function httpReranker(config: HttpConfig, log: Logger): ScoreDocuments {
  // Masked wherever the upstream layer or the logger might print it.
  registerSecret(config.apiKey);
  const http = createUpstreamHttp({
    service: 'the reranker',
    log,
    timeoutMs: config.timeoutMs,
    maxRetries: 0,
    maxResponseBytes: 1024 * 1024,
  });
  const headers: Record<string, string> = config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {};
  return async (query, documents, signal) => {
    const json =
      config.api === 'cohere'
        ? { model: config.model, query, documents, top_n: documents.length }
        : { query, texts: documents, truncate: true, raw_scores: false, return_text: false };
    let text: string;
    try {
      const response = await http.request({
        method: 'POST',
        url: config.url,
        route: `POST rerank (${config.api})`,
        signal,
        idempotent: false,
        headers,
        json,
      });
      text = response.text();
    } catch (error) {
      throw failureOf(error, config.timeoutMs);
    }
    return scoresOf(config.api, parseLenient(text), documents.length);
  };
}
