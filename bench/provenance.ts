/**
 * What publisher provenance costs: c64 event_publish with no signing key (records stamped,
 * not signed) against the same with an HMAC secret and with an Ed25519 key, each on its
 * own fresh stack in the same run; and the gateway's own per-record work (stamp and sign
 * on publish, check on consume) timed in this process, expressed as a share of the time
 * a c64 publish or a warm poll takes.
 */
import { generateKeyPairSync } from 'node:crypto';
import { Provenance } from '../gateway/namespaces/event/provenance.ts';
import { loadKeyRing } from '../gateway/namespaces/event/signing-keys.ts';
import { createTopic, publishRun, startStack } from './event.ts';

export interface SigningCost {
  /** Microseconds of gateway work per record: stamp + sign on publish, check on consume. */
  signUs: number;
  verifyUs: number;
  c64Rps: number;
  p99Ms: number;
}

export interface ProvenanceResults {
  unsignedC64Rps: number;
  unsignedP99Ms: number;
  hmac: SigningCost;
  ed25519: SigningCost;
}

type Run = { rps: number; p50Ms: number; p99Ms: number };

const round = (n: number, places = 2) => Math.round(n * 10 ** places) / 10 ** places;

/** Gateway work per record for 1 KiB values with two caller headers, as the publish bench sends. */
function perRecordCost(env: Record<string, string>): { signUs: number; verifyUs: number } {
  const provenance = new Provenance(loadKeyRing(env));
  const record = { topic: 'bench-topic', key: 'k1', value: 'x'.repeat(1024), headers: { a: '1', b: '2' } };
  const rounds = 5000;
  for (let i = 0; i < 500; i++) provenance.stamp(record, 'key_bench');
  let started = performance.now();
  let headers: Record<string, string> = {};
  for (let i = 0; i < rounds; i++) headers = provenance.stamp(record, 'key_bench').headers;
  const signUs = ((performance.now() - started) * 1000) / rounds;
  const message = { ...record, partition: 0, offset: 1, headers, timestamp: '' };
  if (provenance.assess(message).provenance !== 'verified') throw new Error('bench record did not verify');
  started = performance.now();
  for (let i = 0; i < rounds; i++) provenance.assess(message);
  const verifyUs = ((performance.now() - started) * 1000) / rounds;
  return { signUs: round(signUs), verifyUs: round(verifyUs) };
}

async function c64(bootstrap: string, gatewayEnv: Record<string, string>, seconds: number) {
  const stack = await startStack(bootstrap, {}, gatewayEnv);
  try {
    const topic = `bench-prov-${Date.now().toString(36)}`;
    await createTopic(bootstrap, topic, 3);
    return await publishRun(bootstrap, stack, topic, 64, seconds);
  } finally {
    await stack.stop();
  }
}

export async function benchProvenance(
  bootstrap: string,
  seconds: number,
  log: (line: string) => void,
): Promise<ProvenanceResults> {
  const hmacEnv = { EVENT_SIGNING_SECRET: 'bench-signing-secret-0123456789abcdef' };
  const pem = String(generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
  const edEnv = { EVENT_SIGNING_PRIVATE_KEY: pem };
  log('provenance: per-record sign and verify cost (HMAC, Ed25519)');
  const hmacCost = perRecordCost(hmacEnv);
  const edCost = perRecordCost(edEnv);
  // Interleaved and best of two: on a shared machine a background burst can cost one run
  // more than signing does, and it should not decide which configuration looks slower.
  const best = { unsigned: [] as Run[], hmac: [] as Run[], ed: [] as Run[] };
  for (let round = 1; round <= 2; round++) {
    log(`provenance: c64 event_publish without a signing key (round ${round})`);
    best.unsigned.push(await c64(bootstrap, {}, seconds));
    log(`provenance: c64 event_publish signing with EVENT_SIGNING_SECRET (round ${round})`);
    best.hmac.push(await c64(bootstrap, hmacEnv, seconds));
    log(`provenance: c64 event_publish signing with EVENT_SIGNING_PRIVATE_KEY, Ed25519 (round ${round})`);
    best.ed.push(await c64(bootstrap, edEnv, seconds));
  }
  const top = (runs: Run[]) => runs.reduce((a, b) => (b.rps > a.rps ? b : a));
  const unsigned = top(best.unsigned);
  const hmac = top(best.hmac);
  const ed = top(best.ed);
  return {
    unsignedC64Rps: unsigned.rps,
    unsignedP99Ms: unsigned.p99Ms,
    hmac: { ...hmacCost, c64Rps: hmac.rps, p99Ms: hmac.p99Ms },
    ed25519: { ...edCost, c64Rps: ed.rps, p99Ms: ed.p99Ms },
  };
}

/** Share of a c64 publish's per-call time (1 / rps) that signing one record takes. */
export function shareOfC64(signUs: number, c64Rps: number): number {
  return round((signUs * c64Rps) / 1e6, 4);
}
