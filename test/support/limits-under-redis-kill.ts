/**
 * Rate-limited calls through every gateway of a fleet (test/support/pairs.ts) while the one
 * Valkey they share for limits (RATE_LIMIT_REDIS_URL) is killed -9 and started again: what
 * each gateway answered before, while it was down, while it was being started again and
 * after, the longest stretch in which no call got a limit decision (admitted or 429), and
 * whether one key's limit holds across the gateways again with no gateway restarted. Shared by test/fleet/redis-kill.test.ts and
 * `npm run chaos -- fleet`, so the campaign's row and the test drive the same fault.
 */
import { waitFor } from './harness.ts';
import { postToolsList } from './tool-call.ts';

/**
 * When a call was made and answered, relative to the fault. `down`: started once the killed
 * server had exited and answered before its restart began, so no Valkey existed for the whole
 * call and any admission is the gateway's own. `restarting`: started before the restarted
 * server answered the harness's PING and answered after the restart began; its verdict may
 * come from the new, empty Valkey (a full bucket: up to a burst admitted, correctly), since a
 * gateway can reconnect before the harness sees the server up. Calls started before the kill
 * finished are `before`, whenever answered.
 */
export type LimitsPhase = 'before' | 'down' | 'restarting' | 'after';
export const LIMITS_PHASES: readonly LimitsPhase[] = ['before', 'down', 'restarting', 'after'];

export interface LimitsTally {
  /** HTTP 200: the limit admitted the call. */
  admitted: number;
  /** HTTP 429: the limit refused it. */
  limited: number;
  /** HTTP 503 naming RATE_LIMIT_ON_STORE_ERROR=deny. */
  storeRefused: number;
  /** HTTP 503 from a load balancer with no gateway left (deploy/haproxy/errors/503.http). */
  noGateway: number;
  http500: number;
  /** Any other status (a 503 that does not name the setting included). */
  other: number;
  /** No HTTP answer within the call's deadline, or a dropped connection. */
  unanswered: number;
}

export interface SharedCheck {
  burst: number;
  /** Per gateway: calls admitted, refused with 429, refused otherwise. */
  admitted: number[];
  limited: number[];
  refusedOtherwise: number[];
  /** Tokens the bucket may have refilled during the check (rate 1/min). */
  refills: number;
  held: boolean;
}

export interface LimitsOutageReport {
  /** Per phase, per gateway. */
  tally: Record<LimitsPhase, LimitsTally[]>;
  /** Status and body of the first few refusals for the store. */
  storeRefusals: string[];
  /** Status, headers and body of the first few load-balancer refusals (no gateway left). */
  noGateway: string[];
  /** Status and body of the first few answers that were none of 200, 429 or those refusals. */
  odd: string[];
  /** Per call admitted in `restarting`: ms from the restart's start to its answer (the first 20). */
  admittedWhileRestartingAtMs: number[];
  /** From the restart's start to the restarted server answering the harness's PING, in ms. */
  restartTookMs: number;
  /** Longest time in which no call got a limit decision (200 or 429), in ms. */
  longestPauseMs: number;
  /** From Valkey answering again to every gateway deciding again, in ms. */
  decidingAgainAfterMs: number;
  /** From Valkey answering again to the check that found one budget shared again, in ms. */
  sharedAgainAfterMs: number;
  /** The last check: a fresh key's burst spent through all gateways. */
  shared: SharedCheck;
  /** The slowest call, in ms (every call has CALL_DEADLINE_MS). */
  slowestMs: number;
}

export interface LimitsOutageOptions {
  /** Each gateway's MCP base, `http://127.0.0.1:port`. */
  urls: string[];
  /** A key the load spends, with a rate limit short enough that each call reaches Redis (e.g. 10/s). */
  key: string;
  /** Where the check after the restart spends its burst, in turn (default `urls`): each gateway itself. */
  checkUrls?: string[];
  /** A namespace the keys may call (tools/list is sent there). */
  namespace: string;
  kill(): Promise<void>;
  /** Starts Valkey again and resolves once it answers. */
  restart(): Promise<void>;
  /** A fresh key limited to `burst` calls and 1 per minute after, for the check after the restart. */
  mint(burst: number): Promise<string>;
  callersPerGateway?: number;
  /** How long Valkey stays down. Default 3 s. */
  downMs?: number;
  /** Run once Valkey is down, within downMs (what else the caller looks at, such as /readyz). */
  whileDown?(): Promise<void>;
  log?: (line: string) => void;
}

/** The deadline of one call: past it the call counts as unanswered. */
export const CALL_DEADLINE_MS = 30_000;
const SHARED_BURST = 10;
const SHARED_TRIES = 15;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Sent {
  status: number;
  body: string;
  retryAfter?: string | null;
  contentType?: string | null;
}

/** One rate-limited call (tools/list) with `key`: its status and body, status 0 when unanswered. */
export async function send(base: string, namespace: string, key: string): Promise<Sent> {
  try {
    const response = await postToolsList(`${base}/${namespace}/mcp`, key, {
      signal: AbortSignal.timeout(CALL_DEADLINE_MS),
    });
    return {
      status: response.status,
      body: await response.text(),
      retryAfter: response.headers.get('retry-after'),
      contentType: response.headers.get('content-type'),
    };
  } catch (error) {
    // fetch's own message ("fetch failed") hides what happened to the connection.
    const cause = (error as Error).cause as Error | undefined;
    return { status: 0, body: `${(error as Error).message}${cause ? ` (${cause.message})` : ''}` };
  }
}

const emptyTally = (): LimitsTally => ({
  admitted: 0,
  limited: 0,
  storeRefused: 0,
  noGateway: 0,
  http500: 0,
  other: 0,
  unanswered: 0,
});

function count(tally: LimitsTally, sent: Sent): keyof LimitsTally {
  let kind: keyof LimitsTally = 'other';
  if (sent.status === 200) kind = 'admitted';
  else if (sent.status === 429) kind = 'limited';
  else if (sent.status === 503 && sent.body.includes('RATE_LIMIT_ON_STORE_ERROR')) kind = 'storeRefused';
  else if (sent.status === 503 && sent.body.includes('"no_gateway_available"')) kind = 'noGateway';
  else if (sent.status === 500) kind = 'http500';
  else if (sent.status === 0) kind = 'unanswered';
  tally[kind]++;
  return kind;
}

/** A fresh key's burst spent through every gateway in turn: one budget if the total admitted is the burst. */
export async function checkShared(options: LimitsOutageOptions): Promise<SharedCheck> {
  const urls = options.checkUrls ?? options.urls;
  const key = await options.mint(SHARED_BURST);
  const started = Date.now();
  const admitted = urls.map(() => 0);
  const limited = urls.map(() => 0);
  const refusedOtherwise = urls.map(() => 0);
  for (let i = 0; i < SHARED_BURST * 3; i++) {
    const at = i % urls.length;
    const sent = await send(urls[at]!, options.namespace, key);
    if (sent.status === 200) admitted[at]!++;
    else if (sent.status === 429) limited[at]!++;
    else refusedOtherwise[at]!++;
  }
  const refills = Math.ceil((Date.now() - started) / 60_000);
  const total = admitted.reduce((sum, n) => sum + n, 0);
  const held =
    total >= SHARED_BURST &&
    total <= SHARED_BURST + refills &&
    limited.every((n) => n > 0) &&
    refusedOtherwise.every((n) => n === 0);
  return { burst: SHARED_BURST, admitted, limited, refusedOtherwise, refills, held };
}

/** What the callers saw, call by call, sorted by phase and gateway. */
function recorder(urls: string[]) {
  const rec = {
    tally: Object.fromEntries(LIMITS_PHASES.map((phase) => [phase, urls.map(emptyTally)])) as Record<
      LimitsPhase,
      LimitsTally[]
    >,
    clock: { phase: 'before' as LimitsPhase, restartingAt: 0, restartedAt: 0 },
    admittedWhileRestartingAtMs: [] as number[],
    storeRefusals: [] as string[],
    noGateway: [] as string[],
    odd: [] as string[],
    // Per gateway: when it first decided a call that started after Valkey was back.
    decidedAfter: urls.map(() => 0),
    lastDecisionAt: Date.now(),
    longestPauseMs: 0,
    slowestMs: 0,
    record(at: number, startPhase: LimitsPhase, startedAt: number, sent: Sent): void {
      const now = Date.now();
      rec.slowestMs = Math.max(rec.slowestMs, now - startedAt);
      // Started while down but answered once the restart had begun: it may have met the new server.
      const phase = startPhase === 'down' && rec.clock.phase !== 'down' ? 'restarting' : startPhase;
      if (phase === 'restarting' && sent.status === 200 && rec.admittedWhileRestartingAtMs.length < 20)
        rec.admittedWhileRestartingAtMs.push(now - rec.clock.restartingAt);
      const kind = count(rec.tally[phase][at]!, sent);
      const samples =
        kind === 'storeRefused' ? rec.storeRefusals : kind === 'noGateway' ? rec.noGateway : rec.odd;
      if (kind === 'noGateway' && samples.length < 3)
        samples.push(`${sent.status} ${sent.contentType} retry-after=${sent.retryAfter} ${sent.body}`);
      else if (kind !== 'admitted' && kind !== 'limited' && samples.length < 3)
        samples.push(`${sent.status} ${sent.body.slice(0, 1000)}`);
      if (sent.status === 200 || sent.status === 429) {
        rec.longestPauseMs = Math.max(rec.longestPauseMs, now - rec.lastDecisionAt);
        rec.lastDecisionAt = now;
        if (phase === 'after' && rec.decidedAfter[at] === 0) rec.decidedAfter[at] = now;
      }
    },
  };
  return rec;
}

export async function limitsUnderRedisKill(options: LimitsOutageOptions): Promise<LimitsOutageReport> {
  const { urls } = options;
  const log = options.log ?? (() => {});
  const rec = recorder(urls);
  const { clock, tally } = rec;
  let running = true;
  const callers = urls.flatMap((url, at) =>
    Array.from({ length: options.callersPerGateway ?? 2 }, async () => {
      while (running) {
        const startedAt = Date.now();
        const startPhase = clock.phase;
        const sent = await send(url, options.namespace, options.key);
        rec.record(at, startPhase, startedAt, sent);
        // A refusal answered at once would spin: the callers stand for steady traffic.
        if (sent.status !== 200) await sleep(5);
      }
    }),
  );
  const decisions = () => tally.before.reduce((sum, t) => sum + t.admitted + t.limited, 0);
  let shared: SharedCheck | undefined;
  let sharedAt = 0;
  try {
    await waitFor(() => decisions() >= 100, {
      what: '100 limit decisions before the kill',
      timeoutMs: 60_000,
    });
    const killedAt = Date.now();
    await options.kill();
    clock.phase = 'down';
    log('Valkey killed -9');
    await options.whileDown?.();
    await sleep((options.downMs ?? 3000) - (Date.now() - killedAt));
    clock.phase = 'restarting';
    clock.restartingAt = Date.now();
    await options.restart();
    clock.restartedAt = Date.now();
    clock.phase = 'after';
    log(`Valkey back (${clock.restartedAt - clock.restartingAt} ms after its restart began)`);
    await waitFor(() => rec.decidedAfter.every((at) => at > 0), {
      what: 'every gateway to decide a call again after Valkey came back',
      timeoutMs: 60_000,
      intervalMs: 50,
    });
  } finally {
    running = false;
    await Promise.all(callers);
  }
  for (let tries = 0; tries < SHARED_TRIES && !shared?.held; tries++) {
    if (tries > 0) await sleep(1000);
    shared = await checkShared(options);
    sharedAt = Date.now();
  }
  return {
    tally,
    storeRefusals: rec.storeRefusals,
    noGateway: rec.noGateway,
    odd: rec.odd,
    admittedWhileRestartingAtMs: rec.admittedWhileRestartingAtMs,
    restartTookMs: clock.restartedAt - clock.restartingAt,
    longestPauseMs: rec.longestPauseMs,
    decidingAgainAfterMs: Math.max(...rec.decidedAfter) - clock.restartedAt,
    sharedAgainAfterMs: sharedAt - clock.restartedAt,
    shared: shared!,
    slowestMs: rec.slowestMs,
  };
}

/** Every phase's tallies, per gateway, in one list (for totals over the whole run). */
export function everyPhase(tally: Record<LimitsPhase, LimitsTally[]>): LimitsTally[] {
  return LIMITS_PHASES.flatMap((phase) => tally[phase]);
}

/** Sums a phase's tallies over the gateways. */
export function sumTally(tallies: LimitsTally[]): LimitsTally {
  const total = emptyTally();
  for (const t of tallies)
    for (const field of Object.keys(total) as (keyof LimitsTally)[]) total[field] += t[field];
  return total;
}
