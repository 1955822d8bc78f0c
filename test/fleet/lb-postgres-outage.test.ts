/**
 * The fleet's one Postgres (a private server: it is killed) taken away with kill -9 while
 * memories are written THROUGH HAProxy running deploy/haproxy/haproxy.cfg. /readyz asks the
 * state store, so every gateway fails it and HAProxy is left with none: from then on it
 * answers for itself with deploy/haproxy/errors/503.http (JSON, Retry-After), not its HTML
 * page. Once the server is back both gateways return to rotation, writes succeed through
 * both, every acknowledged write is in the database, and no caller saw an HTTP 500.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { runCli } from '../support/cli.ts';
import { findHaproxy, type ServerStat } from '../support/haproxy.ts';
import { testKafka } from '../support/kafka-env.ts';
import { allUp, type Balanced, balance, type Watch, watchServers } from '../support/lb-watch.ts';
import {
  type MemoryAnswer,
  memoryWritesUnderOutage,
  missingMemories,
  writeMemory,
} from '../support/memory-under-outage.ts';
import { type OwnPostgres, startOwnPostgres } from '../support/own-postgres.ts';
import { type Pairs, startPairs } from '../support/pairs.ts';

const kafka = testKafka();
const haproxy = await findHaproxy();
if (haproxy.skip) console.log(`# [fleet] skipped: ${haproxy.skip}`);
const log = (line: string) => console.log(`# [fleet] ${line}`);

let postgres: OwnPostgres | undefined;
let fleet: Pairs | undefined;
let balanced: Balanced | undefined;
after(async () => {
  await balanced?.stop();
  await fleet?.close();
  await postgres?.close();
});

/** HAProxy's own answer when it has no gateway: deploy/haproxy/errors/503.http. */
const fromBalancer = (a: MemoryAnswer) => a.status === 503 && a.body.error === 'no_gateway_available';

interface Summary {
  answers: MemoryAnswer[];
  acknowledged: number;
  lost: number;
  marks: { killedAt: number; restartedAt: number };
  watch: Watch;
  wroteAgain: number[];
  longestPauseMs: number;
}

/** The run in one line: what the callers got in each phase and when HAProxy changed its mind. */
function summary({ answers, acknowledged, lost, marks, watch, wroteAgain, longestPauseMs }: Summary): string {
  const count = (phase: string, test: (a: MemoryAnswer) => boolean) =>
    answers.filter((a) => a.phase === phase && test(a)).length;
  const allOut = watch.samples.find(
    (s) => s.at >= marks.killedAt && Object.values(s.statuses).every((v) => v.startsWith('DOWN')),
  );
  const backUp = watch.samples.find(
    (s) => s.at >= marks.restartedAt && Object.values(s.statuses).every((v) => v === 'UP'),
  );
  const statuses: Record<string, number> = {};
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  return (
    `through HAProxy, postmaster kill -9: ${answers.length} writes (statuses ${JSON.stringify(statuses)}), ` +
    `${acknowledged} acknowledged, ${lost} lost; ${count('down', (a) => a.status === 0)} connections closed unanswered while down; down: ${count('down', (a) => Boolean(a.id))} written, ` +
    `${count('down', (a) => a.code !== undefined)} tool errors, ` +
    `${count('down', (a) => a.status === 503 && !fromBalancer(a))} x gateway 503, ` +
    `${count('down', fromBalancer)} x HAProxy 503; after: ${count('after', fromBalancer)} x HAProxy 503; ` +
    `none UP ${allOut ? allOut.at - marks.killedAt : '-'} ms after the kill; both UP ` +
    `${backUp ? backUp.at - marks.restartedAt : '-'} ms after the server was back; ` +
    `2xx per gateway since the restart ${JSON.stringify(wroteAgain)}; longest pause ${longestPauseMs} ms`
  );
}

const answered2xx = (stats: Record<string, ServerStat>) => Object.values(stats).map((s) => s.answered2xx);

test('Postgres killed -9 under writes through HAProxy: no gateway left, JSON 503 with Retry-After, nothing lost', {
  skip: haproxy.skip ?? false,
  timeout: 300_000,
}, async () => {
  postgres = await startOwnPostgres();
  const db = postgres;
  // Key verdicts expire within the outage, so calls need the dead store; no embedder to wait for.
  fleet = await startPairs({
    bootstrap: kafka.plaintext,
    postgresUrl: db.url,
    gatewayEnv: { API_KEY_CACHE_TTL_MS: '200', MEMORY_EMBEDDINGS: 'none' },
  });
  balanced = await balance(haproxy, fleet);
  const { lb } = balanced;
  const made = await runCli(
    'keys',
    ['create', '--label', 'lb-postgres', '--namespaces', 'memory', '--json'],
    {
      env: fleet.storeEnv,
    },
  );
  assert.equal(made.code, 0, made.stderr);
  const key = (JSON.parse(made.stdout) as { key: string }).key;

  const watch = watchServers(lb);
  const marks = { killedAt: 0, restartedAt: 0, noneUpAt: 0 };
  let atRestart: number[] = [];
  const report = await memoryWritesUnderOutage({
    urls: [lb.url],
    key,
    databaseUrl: db.url,
    kill: async () => {
      marks.killedAt = Date.now();
      await db.kill();
    },
    restart: async () => {
      atRestart = answered2xx(await lb.stats());
      await db.restart();
      marks.restartedAt = Date.now();
    },
    // Down until HAProxy has had no gateway for a while and answered a few calls itself.
    downUntil: (answers) => {
      if (watch.noneUp() && marks.noneUpAt === 0) marks.noneUpAt = Date.now();
      return marks.noneUpAt > 0 && answers.filter((a) => a.phase === 'down' && fromBalancer(a)).length >= 20;
    },
    log,
  });
  await allUp(lb);
  // Through HAProxy, every gateway acknowledges writes again (roundrobin spreads them).
  for (let i = 0; i < 10; i++) {
    const answer = await writeMemory(lb.url, key, `after the outage ${i}`);
    assert.ok(answer.id, `a write through HAProxy after the outage: ${JSON.stringify(answer)}`);
    report.acknowledged.push(answer.id);
  }
  const wroteAgain = answered2xx(await lb.stats()).map((n, at) => n - atRestart[at]!);
  await watch.stop();
  const { answers } = report;
  const lost = await missingMemories(db.url, report.acknowledged);
  const own = answers.filter(fromBalancer);
  log(
    summary({
      answers,
      acknowledged: report.acknowledged.length,
      lost: lost.length,
      marks,
      watch,
      wroteAgain,
      longestPauseMs: report.longestPauseMs,
    }),
  );
  const allOut = watch.samples.some(
    (s) => s.at >= marks.killedAt && Object.values(s.statuses).every((v) => v.startsWith('DOWN')),
  );
  assert.deepEqual(
    answers.filter((a) => a.status === 500),
    [],
    'no HTTP 500 at any time',
  );
  // With every gateway DOWN the shipped configuration's fallback server answers, so a call
  // being retried as the last gateway leaves rotation is answered too, not closed unanswered.
  assert.deepEqual(
    answers.filter((a) => a.status === 0),
    [],
    'every call answered, including those retried as the last gateway left rotation',
  );
  assert.deepEqual(
    answers.filter((a) => a.status !== 200 && a.status !== 503),
    [],
    'every other call answered: 200 (written, or a tool error) or a JSON 503',
  );
  assert.ok(allOut, 'HAProxy took both gateways out while the store was down');
  assert.ok(own.length >= 20, 'HAProxy answered for itself while no gateway was UP');
  for (const answer of own) {
    assert.equal(answer.retryAfter, '5', 'the load balancer says when to retry');
    assert.match(String(answer.body.message), /No MCP gateway .* Retry/);
  }
  assert.deepEqual(lost, [], 'every acknowledged write is in the database');
  assert.ok(
    wroteAgain.every((n) => n > 0),
    `both gateways served again after the restart: ${wroteAgain}`,
  );
});
