/**
 * The rate limit shared by gateway processes and hosts (RATE_LIMIT_REDIS_URL): the same
 * GCRA as the in-process table, run as one Lua script so the read-decide-write is atomic
 * on the server, timed by the server's clock so hosts with skewed clocks still agree.
 * A process leases several requests per call and spends them locally (rate-gate.ts), so
 * the script takes up to N at once, and takes back what a process did not spend.
 */
import { createHash } from 'node:crypto';
import type { RatePolicy } from '../core/key-limits.ts';
import { parseRedisUrl, RespClient, RespError, StoreUnavailableError } from './resp-client.ts';
import type { Grant } from './shared-table.ts';

// KEYS[1] the key's arrival time; ARGV interval (µs), burst, and N: the requests wanted
// (N > 0) or given back (N < 0). Returns {granted, wait µs}: up to N requests if the bucket
// holds any, else {0, the wait until one}. Debt past a full bucket (a limit was raised)
// starts over with a full bucket, as in shared-table.ts; a give-back never fills the
// bucket past full.
const GCRA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tau = interval * tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if want < 0 then
  if tat <= now then return {0, 0} end
  local back = tat + want * interval
  if back <= now then
    redis.call('DEL', KEYS[1])
  else
    redis.call('SET', KEYS[1], string.format('%.0f', math.ceil(back)), 'PX', math.ceil((back - now) / 1000) + 1000)
  end
  return {0, 0}
end
if tat < now or tat > now + tau then tat = now end
local available = math.floor((now + tau - tat) / interval)
if available < 1 then return {0, math.ceil(tat + interval - tau - now)} end
local granted = math.min(want, available)
local nextTat = tat + granted * interval
redis.call('SET', KEYS[1], string.format('%.0f', math.ceil(nextTat)), 'PX', math.ceil((nextTat - now) / 1000) + 1000)
return {granted, 0}
`;
const GCRA_SHA = createHash('sha1').update(GCRA).digest('hex');

export interface RemoteRateStore {
  /** Up to `want` requests of the key's budget; rejects with StoreUnavailableError when the store cannot decide. */
  lease(keyId: string, policy: RatePolicy, want: number): Promise<Grant>;
  /** Puts leased requests that were not spent back into the key's bucket. */
  giveBack(keyId: string, policy: RatePolicy, count: number): Promise<void>;
  /** Resolves when the store answers now (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class RedisRateStore implements RemoteRateStore {
  private readonly client: RespClient;

  constructor(url: string, timeoutMs = 500) {
    this.client = new RespClient(parseRedisUrl(url), timeoutMs);
  }

  lease(keyId: string, policy: RatePolicy, want: number): Promise<Grant> {
    return this.run(keyId, policy, want);
  }

  async giveBack(keyId: string, policy: RatePolicy, count: number): Promise<void> {
    await this.run(keyId, policy, -count);
  }

  private async run(keyId: string, policy: RatePolicy, n: number): Promise<Grant> {
    const key = `mcp-gateway:rate:${keyId}`;
    const args = [1, key, policy.intervalMicros, policy.burst, n];
    let reply = await this.client.command(['EVALSHA', GCRA_SHA, ...args]);
    // A restarted or flushed server forgot the script: EVAL sends it again (and caches it).
    if (reply instanceof RespError && reply.message.startsWith('NOSCRIPT')) {
      reply = await this.client.command(['EVAL', GCRA, ...args]);
    }
    if (!Array.isArray(reply) || typeof reply[0] !== 'number' || typeof reply[1] !== 'number') {
      const detail = reply instanceof RespError ? reply.message : 'an unexpected reply';
      throw new StoreUnavailableError(`the Redis rate-limit script failed: ${detail}`);
    }
    return { granted: reply[0] as number, waitMicros: reply[1] as number };
  }

  async ping(): Promise<void> {
    const reply = await this.client.command(['PING']);
    if (reply !== 'PONG')
      throw new StoreUnavailableError('Redis answered PING with something other than PONG');
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
