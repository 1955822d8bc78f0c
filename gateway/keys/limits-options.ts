/**
 * The limit options of `npm run keys -- create|update` (--rate, --burst, --quota,
 * --max-polls) and the limit lines of `list` and `show`.
 */
import type { ApiKeyRecord } from '../accounts/model.ts';
import {
  describeQuotas,
  describeRate,
  type KeyLimits,
  LimitSyntaxError,
  METERED_TOOLS,
  parseBurst,
  parseMaxPolls,
  parseQuotas,
  parseRate,
  type RatePolicy,
} from '../core/key-limits.ts';
import { NAMESPACE_NAMES } from '../core/namespace-names.ts';
import { nextUtcMidnight } from '../limits/quotas.ts';

export interface LimitFlags {
  rate?: string | undefined;
  burst?: string | undefined;
  quota?: string | undefined;
  maxPolls?: string | undefined;
}

const QUOTA_NAMES: readonly string[] = [...NAMESPACE_NAMES, ...METERED_TOOLS];

export function hasLimitFlags(flags: LimitFlags): boolean {
  return [flags.rate, flags.burst, flags.quota, flags.maxPolls].some((value) => value !== undefined);
}

/** Checks every flag's form without a key at hand (update checks before it opens the store). */
export function checkLimitSyntax(flags: LimitFlags): void {
  if (flags.rate !== undefined) parseRate(flags.rate, '--rate');
  if (flags.burst !== undefined) parseBurst(flags.burst, '--burst');
  if (flags.quota !== undefined) parseQuotas(flags.quota, '--quota', QUOTA_NAMES);
  if (flags.maxPolls !== undefined) parseMaxPolls(flags.maxPolls, '--max-polls');
}

/**
 * The limits after applying the flags to `base` (a new key's are empty). A flag left out
 * keeps what the key had; --rate without --burst resets the burst to one unit of the rate,
 * so a changed rate never keeps a burst chosen for another one.
 * Throws LimitSyntaxError naming the flag and its accepted form.
 */
export function applyLimitFlags(base: KeyLimits, flags: LimitFlags): KeyLimits {
  const next: KeyLimits = { ...base };
  if (flags.rate !== undefined) {
    const rate = parseRate(flags.rate, '--rate');
    delete next.burst;
    if (rate === null) {
      delete next.rate;
      next.unlimited = true;
    } else {
      next.rate = rate;
      delete next.unlimited;
    }
  }
  if (flags.burst !== undefined) {
    const burst = parseBurst(flags.burst, '--burst');
    if (!next.rate) {
      throw new LimitSyntaxError(
        '--burst needs a rate: give --rate N/s or N/min with it (the key has none of its own)',
      );
    }
    next.burst = burst;
  }
  if (flags.quota !== undefined) {
    const quotas = parseQuotas(flags.quota, '--quota', QUOTA_NAMES);
    if (Object.keys(quotas).length === 0) delete next.quotas;
    else next.quotas = quotas;
  }
  if (flags.maxPolls !== undefined) {
    const max = parseMaxPolls(flags.maxPolls, '--max-polls');
    if (max === null) delete next.maxPolls;
    else next.maxPolls = max;
  }
  return next;
}

export function limitColumns(limits: KeyLimits, fallback: RatePolicy | null) {
  return {
    rate: describeRate(limits, fallback),
    quotas: describeQuotas(limits),
    maxPolls: limits.maxPolls ?? 'none',
  };
}

/** What `keys show` prints: limits, and each quota's use today. */
export function showKey(
  record: ApiKeyRecord,
  usage: Record<string, number>,
  day: string,
  fallback: RatePolicy | null,
): string {
  const { limits } = record;
  const lines = [
    `${record.id} (${record.label}), owner ${record.owner}${record.revokedAt ? `, revoked ${record.revokedAt}` : ''}`,
    `  rate:       ${describeRate(limits, fallback)}`,
    `  max polls:  ${limits.maxPolls ?? 'none'}`,
    `  quotas:     ${describeQuotas(limits)}`,
    `  today (UTC ${day}, resets ${nextUtcMidnight(new Date(`${day}T00:00:00Z`)).toISOString()}):`,
  ];
  const names = new Set([...Object.keys(limits.quotas ?? {}), ...Object.keys(usage)]);
  if (names.size === 0) lines.push('    no metered calls');
  for (const name of [...names].sort()) {
    const limit = limits.quotas?.[name];
    lines.push(`    ${name}: ${usage[name] ?? 0}${limit === undefined ? ' (no quota)' : ` of ${limit}`}`);
  }
  return lines.join('\n');
}
