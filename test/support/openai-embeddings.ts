/**
 * A loopback stand-in for an OpenAI-compatible embeddings endpoint (POST /v1/embeddings).
 * It enforces the documented request shape and rejects what the real API rejects (missing
 * or wrong bearer key, unknown parameters, empty input, bad dimensions). Vectors are a
 * hashed bag of words, so texts sharing words are close: enough to test ranking.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EmbeddingsServer {
  /** Base URL for EMBEDDINGS_URL (ends in /v1). */
  url: string;
  requests: number;
  /** While set, every request answers with this HTTP status (an outage or an upstream error). */
  failWith: number | null;
  close(): Promise<void>;
}

const ALLOWED = new Set(['model', 'input', 'encoding_format', 'dimensions', 'user']);

export function bagOfWords(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const digest = createHash('sha256').update(word).digest();
    vector[digest.readUInt32BE(0) % dimensions]! += digest[4]! & 1 ? 1 : -1;
  }
  return vector;
}

export async function startEmbeddingsServer(options: { apiKey: string; defaultDimensions?: number }) {
  const state: EmbeddingsServer = {
    url: '',
    requests: 0,
    failWith: null,
    close: async () => {},
  };
  const fail = (res: import('node:http').ServerResponse, status: number, message: string) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: null } }));
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      state.requests++;
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') return fail(res, 404, 'Not found');
      if (state.failWith !== null) return fail(res, state.failWith, 'The server is overloaded');
      if (req.headers.authorization !== `Bearer ${options.apiKey}`) {
        return fail(res, 401, 'Incorrect API key provided');
      }
      if (!String(req.headers['content-type']).startsWith('application/json')) {
        return fail(res, 400, 'Content-Type must be application/json');
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return fail(res, 400, 'We could not parse the JSON body of your request.');
      }
      const unknown = Object.keys(body).filter((name) => !ALLOWED.has(name));
      if (unknown.length > 0) return fail(res, 400, `Unrecognized request argument supplied: ${unknown[0]}`);
      if (typeof body.model !== 'string' || body.model === '') return fail(res, 400, "'model' is required");
      const inputs = typeof body.input === 'string' ? [body.input] : body.input;
      if (
        !Array.isArray(inputs) ||
        inputs.length === 0 ||
        inputs.length > 2048 ||
        !inputs.every((item) => typeof item === 'string' && item.length > 0)
      ) {
        return fail(res, 400, "'input' must be a non-empty string or array of non-empty strings");
      }
      if (
        body.encoding_format !== undefined &&
        body.encoding_format !== 'float' &&
        body.encoding_format !== 'base64'
      ) {
        return fail(res, 400, "'encoding_format' must be 'float' or 'base64'");
      }
      const dimensions = body.dimensions ?? options.defaultDimensions ?? 64;
      if (
        typeof dimensions !== 'number' ||
        !Number.isInteger(dimensions) ||
        dimensions < 1 ||
        dimensions > 3072
      ) {
        return fail(res, 400, "'dimensions' must be a positive integer");
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          data: (inputs as string[]).map((text, index) => ({
            object: 'embedding',
            index,
            embedding: bagOfWords(text, dimensions),
          })),
          model: body.model,
          usage: { prompt_tokens: 1, total_tokens: 1 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}

/** The memory settings that point a gateway at this contract server (64-d vectors). */
export function contractEmbeddingsEnv(server: EmbeddingsServer, apiKey = 'sk-test-secret') {
  return {
    MEMORY_EMBEDDINGS: 'openai',
    EMBEDDINGS_URL: server.url,
    EMBEDDINGS_MODEL: 'text-embedding-3-small',
    EMBEDDINGS_API_KEY: apiKey,
    EMBEDDINGS_DIMENSIONS: '64',
  };
}
