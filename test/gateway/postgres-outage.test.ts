/**
 * kill -9 of the Postgres postmaster while memory writes flow through two gateways sharing
 * it (native PostgreSQL 18.6 of their own, not the run's shared server). API_KEY_CACHE_TTL_MS
 * is short, so key verdicts expire during the outage and lookups reach the dead store: that
 * gave `HTTP 500 {"error":"internal error"}` before. Now: no 500, a 503 with Retry-After naming
 * the store, writes in flight answer STORE_UNAVAILABLE, a gateway with
 * API_KEY_STALE_ON_STORE_ERROR_MS admits only keys the store admitted before (never a new or
 * a revoked one), both gateways write again after the restart without being restarted, and
 * every acknowledged write is in the database. A frozen server (SIGSTOP: connections open,
 * nothing answered) ends in 503 and STORE_UNAVAILABLE too, bounded by the pools' timeouts.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import type { StateStore } from '../../gateway/accounts/model.ts';
import { openStateStore } from '../../gateway/accounts/open.ts';
import { FULL_SCOPES } from '../../gateway/core/scopes.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { waitFor } from '../support/harness.ts';
import { type OwnPostgres, startOwnPostgres } from '../support/own-postgres.ts';
import { postToolCall } from '../support/tool-call.ts';

interface Answer {
  gateway: 'strict' | 'stale';
  status: number;
  retryAfter: string | null;
  body: Record<string, unknown>;
  /** memory_write's errorCode, or undefined when it was written. */
  code?: string;
  id?: string;
}

let postgres: OwnPostgres;
let dataDir: string;
let state: StateStore;
const gateways: Partial<Record<Answer['gateway'], TestGateway>> = {};

before(async () => {
  postgres = await startOwnPostgres();
  dataDir = await mkdtemp(join(tmpdir(), 'mcp-pg-outage-'));
  const env = {
    DATABASE_URL: postgres.url,
    MEMORY_EMBEDDINGS: 'none',
    // Verdicts expire within the outage, so lookups reach the dead store.
    API_KEY_CACHE_TTL_MS: '200',
  };
  gateways.strict = await startTestGateway({ env: { ...env, API_KEY_STALE_ON_STORE_ERROR_MS: '0' } });
  gateways.stale = await startTestGateway({ env: { ...env, API_KEY_STALE_ON_STORE_ERROR_MS: '300000' } });
  state = await openStateStore({ DATA_DIR: dataDir, DATABASE_URL: postgres.url });
});
after(async () => {
  await state?.close();
  for (const gateway of Object.values(gateways)) await gateway?.close();
  await postgres?.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function write(gateway: Answer['gateway'], key: string, content: string): Promise<Answer> {
  const response = await postToolCall(`${gateways[gateway]!.url}/memory/mcp`, key, 'memory_write', {
    content,
  });
  // biome-ignore lint/suspicious/noExplicitAny: JSON-RPC answers are checked field by field
  const body = (await response.json()) as Record<string, any>;
  const answer: Answer = {
    gateway,
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body,
  };
  const result = body.result;
  if (response.status === 200 && result) {
    if (result.isError) answer.code = result._meta?.['mcp-gateway/errorCode'] ?? 'unknown';
    else answer.id = result.structuredContent.id;
  }
  return answer;
}

test('kill -9 of the postmaster under writes: no 500, 503 naming the store, recovery, nothing acknowledged lost', async () => {
  const owner = (await state.operatorAccount()).id;
  const mint = (label: string) =>
    state.createKey({ label, ownerId: owner, scopes: FULL_SCOPES, expiresAt: null });
  const known = await mint('admitted-before');
  const fresh = await mint('never-seen-before');
  const revoked = await mint('revoked-before');
  await state.revokeKey(revoked.id);
  for (const gateway of ['strict', 'stale'] as const) {
    assert.ok(
      (await write(gateway, known.key, `warm-up ${gateway}`)).id,
      'the known key writes before the outage',
    );
    assert.equal((await write(gateway, revoked.key, 'refused')).status, 401);
  }

  const answers: Answer[] = [];
  type Phase = 'before' | 'down' | 'after';
  const clock = { phase: 'before' as Phase };
  const phaseOf = new Map<Answer, Phase>();
  let running = true;
  const writers = Array.from({ length: 4 }, async (_, writer) => {
    for (let i = 0; running; i++) {
      const gateway = i % 2 === 0 ? 'strict' : 'stale';
      const answer = await write(gateway, known.key, `note ${writer}-${i}`);
      answers.push(answer);
      phaseOf.set(answer, clock.phase);
    }
  });
  const seen = (pick: (a: Answer) => boolean) => {
    const failed = answers.find((a) => a.status === 500);
    // Said at once, rather than as a wait that never ends.
    if (failed)
      throw new Error(`HTTP 500 from the ${failed.gateway} gateway: ${JSON.stringify(failed.body)}`);
    return answers.some((a) => pick(a));
  };
  try {
    await waitFor(() => answers.filter((a) => a.id).length >= 40, {
      what: '40 writes before the kill',
      timeoutMs: 60_000,
    });
    await postgres.kill();
    clock.phase = 'down';

    await waitFor(
      () =>
        seen((a) => a.gateway === 'strict' && a.status === 503 && phaseOf.get(a) === 'down') &&
        seen((a) => a.gateway === 'stale' && a.code === 'STORE_UNAVAILABLE' && phaseOf.get(a) === 'down'),
      {
        what: 'a 503 from the strict gateway and STORE_UNAVAILABLE through the stale one',
        timeoutMs: 60_000,
      },
    );
    const refusal = answers.find((a) => a.status === 503)!;
    assert.equal(refusal.body.error, 'store_unavailable');
    assert.equal(refusal.body.store, 'postgres');
    assert.match(String(refusal.retryAfter), /^\d+$/);
    // While it is down: a key never admitted, and a revoked one, are admitted by neither gateway.
    for (const gateway of ['strict', 'stale'] as const) {
      const never = await write(gateway, fresh.key, 'never admitted');
      assert.equal(never.status, 503, `${gateway}: a key the store never admitted`);
      const gone = await write(gateway, revoked.key, 'revoked');
      assert.ok([401, 503].includes(gone.status), `${gateway}: the revoked key got ${gone.status}`);
    }

    await postgres.restart();
    clock.phase = 'after';
    await waitFor(
      () =>
        seen((a) => a.gateway === 'strict' && a.id !== undefined && phaseOf.get(a) === 'after') &&
        seen((a) => a.gateway === 'stale' && a.id !== undefined && phaseOf.get(a) === 'after'),
      { what: 'writes acknowledged through both gateways after the restart', timeoutMs: 60_000 },
    );
  } finally {
    running = false;
    await Promise.all(writers);
  }

  const statuses = new Set(answers.map((a) => a.status));
  assert.ok(!statuses.has(500), 'no HTTP 500');
  assert.deepEqual(
    [...statuses].filter((s) => s !== 200 && s !== 503),
    [],
    'only 200 and 503',
  );
  const codes = new Set(answers.filter((a) => a.code).map((a) => a.code));
  assert.deepEqual(
    [...codes].filter((c) => c !== 'STORE_UNAVAILABLE'),
    [],
    'writes fail only as STORE_UNAVAILABLE',
  );
  assert.ok(answers.some((a) => a.gateway === 'stale' && a.status === 200 && phaseOf.get(a) === 'down'));

  const acknowledged = answers.filter((a) => a.id).map((a) => a.id!);
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  const { rows } = await client.query(
    'SELECT public_id::text AS id FROM memories WHERE public_id = ANY($1::uuid[])',
    [acknowledged],
  );
  await client.end();
  const stored = new Set(rows.map((r) => r.id));
  const lost = acknowledged.filter((id) => !stored.has(id));
  assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged writes lost`);
  const down = answers.filter((a) => phaseOf.get(a) === 'down');
  console.log(
    `outage: ${answers.length} writes, ${acknowledged.length} acknowledged, 0 lost; while down ${down.length} answers: ` +
      `${down.filter((a) => a.status === 503).length} x 503, ${down.filter((a) => a.code === 'STORE_UNAVAILABLE').length} x STORE_UNAVAILABLE, ${down.filter((a) => a.id).length} written`,
  );
});

test('a frozen server (connections open, nothing answered): 503 and STORE_UNAVAILABLE, not a hang; it recovers on resume', async () => {
  const owner = (await state.operatorAccount()).id;
  const known = await state.createKey({
    label: 'frozen',
    ownerId: owner,
    scopes: FULL_SCOPES,
    expiresAt: null,
  });
  assert.ok((await write('strict', known.key, 'warm-up frozen')).id);
  type Phase = 'before' | 'frozen' | 'after';
  const clock = { phase: 'before' as Phase };
  const answers: { answer: Answer; phase: Phase }[] = [];
  let running = true;
  const writers = Array.from({ length: 2 }, async (_, writer) => {
    for (let i = 0; running; i++) {
      const answer = await write('strict', known.key, `frozen note ${writer}-${i}`);
      answers.push({ answer, phase: clock.phase });
    }
  });
  const seen = (phase: Phase, pick: (a: Answer) => boolean) => {
    const failed = answers.find((a) => a.answer.status === 500);
    if (failed) throw new Error(`HTTP 500: ${JSON.stringify(failed.answer.body)}`);
    return answers.some((a) => a.phase === phase && pick(a.answer));
  };
  try {
    await waitFor(() => answers.filter((a) => a.answer.id).length >= 10, {
      what: '10 writes',
      timeoutMs: 60_000,
    });
    await postgres.freeze();
    clock.phase = 'frozen';
    // The key lookup's statement times out (10 s) or its new connection does (5 s); a write
    // waiting on its statement gives up after 30 s.
    await waitFor(
      () => seen('frozen', (a) => a.status === 503) && seen('frozen', (a) => a.code === 'STORE_UNAVAILABLE'),
      { what: 'a 503 and a STORE_UNAVAILABLE while frozen', timeoutMs: 180_000, intervalMs: 200 },
    );
  } finally {
    await postgres.thaw();
  }
  clock.phase = 'after';
  await waitFor(() => seen('after', (a) => a.id !== undefined), {
    what: 'a write after resuming',
    timeoutMs: 60_000,
  });
  running = false;
  await Promise.all(writers);
  assert.deepEqual(
    [...new Set(answers.map((a) => a.answer.code ?? a.answer.status))].filter(
      (s) => s !== 200 && s !== 503 && s !== 'STORE_UNAVAILABLE',
    ),
    [],
  );
  const frozen = answers.filter((a) => a.phase === 'frozen').map((a) => a.answer);
  console.log(
    `frozen: ${frozen.length} answers while frozen: ${frozen.filter((a) => a.status === 503).length} x 503, ` +
      `${frozen.filter((a) => a.code === 'STORE_UNAVAILABLE').length} x STORE_UNAVAILABLE`,
  );
});
