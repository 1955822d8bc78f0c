/**
 * memory_write calls through several gateways sharing one Postgres while the server is
 * taken away (kill -9 of the postmaster) and started again: every answer with the phase it
 * started in, the longest time without an acknowledged write, how soon after the server was
 * back every gateway wrote again, and the acknowledged writes read back from the database.
 * Shared by test/gateway/postgres-outage.test.ts and `npm run chaos -- fleet`.
 */
import pg from 'pg';
import { waitFor } from './harness.ts';
import { postToolCall } from './tool-call.ts';

export type OutagePhase = 'before' | 'down' | 'after';

export interface MemoryAnswer {
  /** Index of the gateway in `urls`. */
  target: number;
  /** 0 when no HTTP answer came within MEMORY_CALL_DEADLINE_MS (or the connection dropped). */
  status: number;
  retryAfter: string | null;
  body: Record<string, unknown>;
  /** memory_write's errorCode, or undefined when it was written (or not answered as a tool). */
  code?: string;
  /** The memory's id when it was written. */
  id?: string;
  phase: OutagePhase;
  ms: number;
}

/** Past this a call counts as unanswered; the gateway gives up a write on a dead store well before. */
export const MEMORY_CALL_DEADLINE_MS = 60_000;

/** One memory_write through `url` with `key`, its failure (a status, a tool error, no answer) as a value. */
export async function writeMemory(
  url: string,
  key: string,
  content: string,
): Promise<Pick<MemoryAnswer, 'status' | 'retryAfter' | 'body' | 'code' | 'id'>> {
  try {
    const response = await postToolCall(
      `${url}/memory/mcp`,
      key,
      'memory_write',
      { content },
      {
        signal: AbortSignal.timeout(MEMORY_CALL_DEADLINE_MS),
      },
    );
    const text = await response.text();
    // biome-ignore lint/suspicious/noExplicitAny: JSON-RPC answers are checked field by field
    let body: Record<string, any>;
    try {
      body = JSON.parse(text);
    } catch {
      body = { text: text.slice(0, 300) };
    }
    const answer = { status: response.status, retryAfter: response.headers.get('retry-after'), body };
    const result = body.result;
    if (response.status !== 200 || !result) return answer;
    if (result.isError) return { ...answer, code: result._meta?.['mcp-gateway/errorCode'] ?? 'unknown' };
    return { ...answer, id: result.structuredContent.id };
  } catch (error) {
    // fetch's own message ("fetch failed") hides what happened to the connection.
    const cause = (error as Error).cause as (Error & { code?: string }) | undefined;
    const why = cause ? ` (${cause.code ?? ''} ${cause.message})` : '';
    return { status: 0, retryAfter: null, body: { error: `${(error as Error).message}${why}` } };
  }
}

/** The ids of `ids` that are not in the memories table. */
export async function missingMemories(databaseUrl: string, ids: string[]): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      'SELECT public_id::text AS id FROM memories WHERE public_id = ANY($1::uuid[])',
      [ids],
    );
    const stored = new Set(rows.map((row) => row.id as string));
    return ids.filter((id) => !stored.has(id));
  } finally {
    await client.end();
  }
}

export interface MemoryOutageOptions {
  /** Each gateway's MCP base; writers take turns over them. */
  urls: string[];
  key: string;
  /** The database, to read acknowledged writes back once the server is up again. */
  databaseUrl: string;
  kill(): Promise<void>;
  /** Starts the server again and resolves once it takes connections. */
  restart(): Promise<void>;
  writers?: number;
  /** Acknowledged writes before the kill. Default 40. */
  warmup?: number;
  /**
   * Polled after the kill until true, before the restart: what must have been seen while
   * the server was down. A throw ends the run (say an HTTP 500 at once). Default: every
   * gateway answered a write that started after the kill.
   */
  downUntil?(answers: MemoryAnswer[]): boolean;
  /** At least this long down. Default 0. */
  downMs?: number;
  /** Run while down, once downUntil holds (calls the test makes itself). */
  whileDown?(answers: MemoryAnswer[]): Promise<void>;
  log?: (line: string) => void;
}

export interface MemoryOutageReport {
  answers: MemoryAnswer[];
  acknowledged: string[];
  /** Acknowledged writes the database does not hold. */
  lost: string[];
  /** Longest time without an acknowledged write, in ms (the outage included). */
  longestPauseMs: number;
  /** From the server taking connections again to every gateway acknowledging a write, in ms. */
  acceptedAgainAfterMs: number;
  slowestMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function memoryWritesUnderOutage(options: MemoryOutageOptions): Promise<MemoryOutageReport> {
  const { urls } = options;
  const log = options.log ?? (() => {});
  const answers: MemoryAnswer[] = [];
  const clock = { phase: 'before' as OutagePhase, restartedAt: 0 };
  const writtenAgain: number[] = urls.map(() => 0);
  let lastAckAt = Date.now();
  let longestPauseMs = 0;
  let running = true;
  const writers = Array.from({ length: options.writers ?? 4 }, async (_, writer) => {
    for (let i = 0; running; i++) {
      const target = (writer + i) % urls.length;
      const phase = clock.phase;
      const started = Date.now();
      const answer = await writeMemory(urls[target]!, options.key, `note ${writer}-${i}`);
      const now = Date.now();
      answers.push({ ...answer, target, phase, ms: now - started });
      // A refusal answered at once would spin: the writers stand for steady traffic.
      if (answer.id === undefined) {
        await sleep(5);
        continue;
      }
      longestPauseMs = Math.max(longestPauseMs, now - lastAckAt);
      lastAckAt = now;
      if (phase === 'after' && writtenAgain[target] === 0) writtenAgain[target] = now;
    }
  });
  const downUntil =
    options.downUntil ??
    ((seen: MemoryAnswer[]) =>
      urls.every((_, at) => seen.some((a) => a.phase === 'down' && a.target === at)));
  try {
    await waitFor(() => answers.filter((a) => a.id).length >= (options.warmup ?? 40), {
      what: () =>
        `${options.warmup ?? 40} writes before the kill; last answer ${JSON.stringify(answers.at(-1))}`,
      timeoutMs: 60_000,
    });
    const killedAt = Date.now();
    await options.kill();
    clock.phase = 'down';
    log('postmaster killed -9');
    await waitFor(() => downUntil(answers), { what: 'the answers awaited while down', timeoutMs: 120_000 });
    await options.whileDown?.(answers);
    await sleep((options.downMs ?? 0) - (Date.now() - killedAt));
    await options.restart();
    clock.restartedAt = Date.now();
    clock.phase = 'after';
    log('postmaster back');
    await waitFor(() => writtenAgain.every((at) => at > 0), {
      what: 'a write acknowledged through every gateway after the restart',
      timeoutMs: 120_000,
    });
  } finally {
    running = false;
    await Promise.all(writers);
  }
  const acknowledged = answers.filter((a) => a.id).map((a) => a.id!);
  return {
    answers,
    acknowledged,
    lost: await missingMemories(options.databaseUrl, acknowledged),
    longestPauseMs,
    acceptedAgainAfterMs: Math.max(...writtenAgain) - clock.restartedAt,
    slowestMs: Math.max(...answers.map((a) => a.ms)),
  };
}
