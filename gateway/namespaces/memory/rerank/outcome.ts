/** How a rerank call ended: the label of mcp_memory_rerank_total, bounded by this list. */
export const RERANK_OUTCOMES = [
  'ok',
  'timeout',
  'http_status',
  'unreachable',
  'bad_shape',
  'bad_score',
  'bad_index',
  'failed',
  'busy',
  'cancelled',
  'settings_invalid',
] as const;

export type RerankOutcome = (typeof RERANK_OUTCOMES)[number];

/** Why a rerank did not happen; its message goes into the search's `degraded`, so it never quotes the upstream. */
export class RerankFailure extends Error {
  constructor(
    readonly outcome: Exclude<RerankOutcome, 'ok'>,
    message: string,
  ) {
    super(message);
    this.name = 'RerankFailure';
  }
}

/** One relevance per document, in the order given; throws RerankFailure. */
export type ScoreDocuments = (query: string, documents: string[], signal: AbortSignal) => Promise<number[]>;
