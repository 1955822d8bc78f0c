/**
 * Per-key limits as stored with each key and as typed by operators: a request rate with a
 * burst, daily quotas and a cap on concurrent long polls. One parser serves the CLI and the
 * environment, so `--rate 20/s` and `RATE_LIMIT_DEFAULT=20/s` accept exactly the same forms.
 * A key's own vocabulary, so it sits low: the store keeps these, the key check reads them, and
 * the limiter and every MCP call carry them, none of them importing another to get it.
 */

export type RateUnit = 's' | 'min';

export interface RateSpec {
  count: number;
  per: RateUnit;
}

export interface KeyLimits {
  /** Absent: the gateway's RATE_LIMIT_DEFAULT applies (or no limit when that is unset). */
  rate?: RateSpec;
  /** Requests allowed at once from idle; absent means one unit's worth of the rate. */
  burst?: number;
  /** Calls per UTC day, by quota name (a namespace, or a metered tool such as memory_write). */
  quotas?: Record<string, number>;
  /** Concurrent event_consume calls of this key. */
  maxPolls?: number;
  /** True when an operator lifted the rate limit for this key: no default applies either. */
  unlimited?: boolean;
}

/** One quota counter taken: ok false when the day's `limit` was already used up. */
export interface QuotaTake {
  ok: boolean;
  used: number;
}

/** What the limiter enforces for one key: a GCRA/token bucket in microseconds. */
export interface RatePolicy {
  spec: RateSpec;
  burst: number;
  /** Microseconds between two requests at the sustained rate. */
  intervalMicros: number;
}

export class LimitSyntaxError extends Error {}

export const RATE_FORM = 'N/s or N/min with N a whole number above 0 (e.g. 20/s, 100/min), or none';
export const BURST_FORM = 'a whole number above 0 (e.g. 40)';
export const QUOTA_FORM = 'name=N/day[,name=N/day…] (e.g. gsc=1000/day,memory_write=10000/day), or none';
export const MAX_POLLS_FORM = 'a whole number above 0 (e.g. 4), or none';

/** Tools metered on their own, beside whole namespaces: the ones that cost storage. */
export const METERED_TOOLS = ['memory_write'] as const;

const WHOLE = /^[1-9]\d{0,8}$/;

function positiveWhole(raw: string, setting: string, form: string): number {
  const trimmed = raw.trim();
  if (!WHOLE.test(trimmed)) throw new LimitSyntaxError(`${setting}: "${raw}" is not ${form}`);
  return Number(trimmed);
}

/** `20/s`, `100/min`; null for `none` (no limit). */
export function parseRate(raw: string, setting: string): RateSpec | null {
  const trimmed = raw.trim().toLowerCase();
  if (trimmed === 'none') return null;
  const match = /^(\d+)\s*\/\s*(s|min)$/.exec(trimmed);
  if (!match || !WHOLE.test(match[1] as string)) {
    throw new LimitSyntaxError(`${setting}: "${raw}" is not a rate; use ${RATE_FORM}`);
  }
  return { count: Number(match[1]), per: match[2] as RateUnit };
}

export function parseBurst(raw: string, setting: string): number {
  return positiveWhole(raw, setting, BURST_FORM);
}

/** null for `none`. */
export function parseMaxPolls(raw: string, setting: string): number | null {
  if (raw.trim().toLowerCase() === 'none') return null;
  return positiveWhole(raw, setting, MAX_POLLS_FORM);
}

/** `gsc=1000/day,producthunt=500/day`; an empty object for `none`. Names must be known. */
export function parseQuotas(
  raw: string,
  setting: string,
  knownNames: readonly string[],
): Record<string, number> {
  if (raw.trim().toLowerCase() === 'none') return {};
  const quotas: Record<string, number> = {};
  for (const part of raw.split(',')) {
    const match = /^\s*([a-z][a-z0-9_]*)\s*=\s*(\d+)\s*\/\s*day\s*$/.exec(part.toLowerCase());
    if (!match || !WHOLE.test(match[2] as string)) {
      throw new LimitSyntaxError(`${setting}: "${part.trim()}" is not a quota; use ${QUOTA_FORM}`);
    }
    const name = match[1] as string;
    if (!knownNames.includes(name)) {
      throw new LimitSyntaxError(
        `${setting}: no quota named ${name}; quotas exist for ${knownNames.join(', ')}`,
      );
    }
    quotas[name] = Number(match[2]);
  }
  return quotas;
}

export function formatRate(spec: RateSpec): string {
  return `${spec.count}/${spec.per}`;
}

export function ratePolicy(spec: RateSpec, burst: number | undefined): RatePolicy {
  const unitMicros = spec.per === 's' ? 1_000_000 : 60_000_000;
  return { spec, burst: burst ?? spec.count, intervalMicros: unitMicros / spec.count };
}

/** The policy a key is held to: its own, else the default, else none. */
export function effectivePolicy(limits: KeyLimits, fallback: RatePolicy | null): RatePolicy | null {
  if (limits.unlimited) return null;
  if (limits.rate) return ratePolicy(limits.rate, limits.burst);
  return fallback;
}

/** One line for listings: `20/s burst 40`, `default (20/s burst 20)`, `none`. */
export function describeRate(limits: KeyLimits, fallback: RatePolicy | null = null): string {
  if (limits.unlimited) return 'none';
  if (limits.rate) return `${formatRate(limits.rate)} burst ${limits.burst ?? limits.rate.count}`;
  return fallback ? `default (${formatRate(fallback.spec)} burst ${fallback.burst})` : 'none';
}

export function describeQuotas(limits: KeyLimits): string {
  const entries = Object.entries(limits.quotas ?? {});
  return entries.length === 0 ? 'none' : entries.map(([name, n]) => `${name}=${n}/day`).join(',');
}

/** Stored limits are JSON written by this module; anything else reads as no limits. */
export function parseStoredLimits(raw: string | null | undefined): KeyLimits {
  if (!raw) return {};
  try {
    const value = JSON.parse(raw) as KeyLimits;
    return typeof value === 'object' && value !== null ? value : {};
  } catch {
    return {};
  }
}
