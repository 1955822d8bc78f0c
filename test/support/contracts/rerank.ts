/**
 * Rerank contract server, both shapes the gateway speaks:
 *
 * - POST /v1/rerank, the shape Cohere, Jina, vLLM and Infinity share: {model, query,
 *   documents, top_n?} → {id, results: [{index, relevance_score}], meta}, sorted by score.
 *   A missing or wrong bearer key is 401; a body that is not JSON is 400; a missing or
 *   mistyped field (model, query, documents of strings) is 422 as their validators answer;
 *   top_n below 1 or above the number of documents is 422.
 * - POST /rerank, text-embeddings-inference's: {query, texts, truncate?, raw_scores?,
 *   return_text?} → [{index, score}], sorted by score. TEI answers a bad body with 422
 *   {error, error_type: "Validation"}, more texts than its max_client_batch_size (32 by
 *   default) with 422 too, and checks the bearer key only when started with --api-key.
 *
 * Scores come from `score(query, document)` (default: the share of the query's words the
 * document holds), written the way Python's json module writes floats: a NaN score goes out
 * as a bare NaN, as a real server whose model overflowed would send it. Faults (429, 5xx,
 * hangs, wrong bodies) are played from the loopback server's fault list.
 */
import { type LoopbackServer, sendJson, startLoopback } from './loopback.ts';

export type Scorer = (query: string, document: string) => number;

export interface RerankContract {
  server: LoopbackServer;
  /** Full endpoint URLs, as MEMORY_RERANK_URL takes them. */
  cohereUrl: string;
  teiUrl: string;
  score: Scorer;
  /** Every accepted body, in order. */
  bodies: Array<{ shape: 'cohere' | 'tei'; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

/** TEI's default --max-client-batch-size. */
export const TEI_MAX_BATCH = 32;

const words = (text: string) => new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);

export const overlapScore: Scorer = (query, document) => {
  const asked = words(query);
  const held = words(document);
  let found = 0;
  for (const word of asked) if (held.has(word)) found++;
  return asked.size ? found / asked.size : 0;
};

/** JSON as Python writes it: non-finite floats as bare NaN / Infinity. */
function pythonJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    typeof v === 'number' && !Number.isFinite(v) ? `__float_${String(v)}__` : v,
  ).replace(/"__float_(NaN|Infinity|-Infinity)__"/g, '$1');
}

function send(res: Parameters<typeof sendJson>[0], status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(pythonJson(body));
}

const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string');

function ranked(query: string, documents: string[], score: Scorer) {
  return documents
    .map((document, index) => ({ index, score: score(query, document) }))
    .sort((a, b) => (Number.isNaN(b.score) ? -1 : b.score - a.score));
}

export async function startRerankContract(options: {
  apiKey: string;
  teiApiKey?: string;
}): Promise<RerankContract> {
  const contract: RerankContract = {
    server: undefined as unknown as LoopbackServer,
    cohereUrl: '',
    teiUrl: '',
    score: overlapScore,
    bodies: [],
    close: () => contract.server.close(),
  };
  contract.server = await startLoopback((req, res) => {
    const shape = req.path === '/v1/rerank' ? 'cohere' : req.path === '/rerank' ? 'tei' : null;
    if (req.method !== 'POST' || !shape) {
      sendJson(res, 404, { message: `no route for ${req.method} ${req.path}` });
      return;
    }
    const key = shape === 'cohere' ? options.apiKey : options.teiApiKey;
    if (key !== undefined && req.headers.authorization !== `Bearer ${key}`) {
      if (shape === 'cohere') sendJson(res, 401, { message: 'invalid api token' });
      else sendJson(res, 401, { error: 'Unauthorized', error_type: 'Unauthorized' });
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(req.body) as Record<string, unknown>;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('not an object');
    } catch {
      if (shape === 'cohere') sendJson(res, 400, { message: 'invalid request: body is not valid JSON' });
      else
        sendJson(res, 422, { error: 'Failed to parse the request body as JSON', error_type: 'Validation' });
      return;
    }
    if (shape === 'cohere') cohere(body, res);
    else tei(body, res);
  });

  function cohere(body: Record<string, unknown>, res: Parameters<typeof sendJson>[0]) {
    const invalid = (message: string) => sendJson(res, 422, { message });
    if (typeof body.model !== 'string' || body.model === '') return invalid('model: field required');
    if (typeof body.query !== 'string' || body.query === '') return invalid('query: field required');
    if (!isStringList(body.documents)) return invalid('documents: a non-empty list of strings is required');
    const topN = body.top_n ?? body.documents.length;
    if (typeof topN !== 'number' || !Number.isInteger(topN)) return invalid('top_n: must be an integer');
    if (topN < 1 || topN > body.documents.length)
      return invalid(`top_n: must be between 1 and the number of documents (${body.documents.length})`);
    contract.bodies.push({ shape: 'cohere', body });
    const results = ranked(body.query, body.documents, contract.score)
      .slice(0, topN)
      .map(({ index, score }) => ({ index, relevance_score: score }));
    send(res, 200, {
      id: `rerank-${contract.bodies.length}`,
      results,
      meta: { billed_units: { search_units: 1 } },
    });
  }

  function tei(body: Record<string, unknown>, res: Parameters<typeof sendJson>[0]) {
    const invalid = (error: string) => sendJson(res, 422, { error, error_type: 'Validation' });
    if (typeof body.query !== 'string') return invalid('missing field `query`');
    if (!isStringList(body.texts)) return invalid('`texts` cannot be empty');
    if (body.texts.length > TEI_MAX_BATCH)
      return invalid(`batch size ${body.texts.length} > maximum allowed batch size ${TEI_MAX_BATCH}`);
    for (const flag of ['truncate', 'raw_scores', 'return_text'])
      if (body[flag] !== undefined && typeof body[flag] !== 'boolean')
        return invalid(`invalid type for \`${flag}\`: expected a boolean`);
    contract.bodies.push({ shape: 'tei', body });
    send(res, 200, ranked(body.query, body.texts, contract.score));
  }

  contract.cohereUrl = `${contract.server.url}/v1/rerank`;
  contract.teiUrl = `${contract.server.url}/rerank`;
  return contract;
}
