/**
 * The rate limit shared by gateway processes and hosts (RATE_LIMIT_REDIS_URL): the same
 * GCRA as the in-process table, run as one Lua script so the read-decide-write is atomic
 * on the server, timed by the server's clock so hosts with skewed clocks still agree.
 */
import { createHash } from 'node:crypto';
import type { RatePolicy } from '../core/key-limits.ts';
import { parseRedisUrl, RespClient, RespError, StoreUnavailableError } from './resp-client.ts';
import type { Verdict } from './shared-table.ts';

// KEYS[1] the key's arrival time; ARGV interval (µs) and burst. Returns {allowed, µs}:
// the wait when refused, the bucket's fill (next - now) when allowed. Debt past a full bucket
// (a limit was raised) starts over with a full bucket, as in shared-table.ts.
const GCRA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tau = interval * tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now or tat > now + tau then tat = now end
local nextTat = tat + interval
local allowAt = nextTat - tau
if now < allowAt then return {0, math.ceil(allowAt - now)} end
redis.call('SET', KEYS[1], string.format('%.0f', math.ceil(nextTat)), 'PX', math.ceil((nextTat - now) / 1000) + 1000)
return {1, math.ceil(nextTat - now)}
`;
const GCRA_SHA = createHash('sha1').update(GCRA).digest('hex');

export interface RemoteRateStore {
  /** Rejects with StoreUnavailableError when the store cannot decide. */
  take(keyId: string, policy: RatePolicy): Promise<Verdict>;
  /** Resolves when the store answers now (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class RedisRateStore implements RemoteRateStore {
  private readonly client: RespClient;

  constructor(url: string, timeoutMs = 500) {
    this.client = new RespClient(parseRedisUrl(url), timeoutMs);
  }

  async take(keyId: string, policy: RatePolicy): Promise<Verdict> {
    const key = `mcp-gateway:rate:${keyId}`;
    const args = [1, key, policy.intervalMicros, policy.burst];
    let reply = await this.client.command(['EVALSHA', GCRA_SHA, ...args]);
    // A restarted or flushed server forgot the script: EVAL sends it again (and caches it).
    if (reply instanceof RespError && reply.message.startsWith('NOSCRIPT')) {
      reply = await this.client.command(['EVAL', GCRA, ...args]);
    }
    if (!Array.isArray(reply) || typeof reply[0] !== 'number' || typeof reply[1] !== 'number') {
      const detail = reply instanceof RespError ? reply.message : 'an unexpected reply';
      throw new StoreUnavailableError(`the Redis rate-limit script failed: ${detail}`);
    }
    const [allowed, micros] = reply as [number, number];
    if (allowed === 0) return { ok: false, remaining: 0, waitMicros: micros };
    const tau = policy.burst * policy.intervalMicros;
    return { ok: true, remaining: Math.max(0, Math.floor((tau - micros) / policy.intervalMicros)) };
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
