/**
 * Google Search Console reports days in Pacific time, and Product Hunt's daily leaderboard
 * turns over at Pacific midnight. Dates are `YYYY-MM-DD` strings; no dependency needed.
 */
const PACIFIC = 'America/Los_Angeles';
/**
 * Built on first use: a time-zone DateTimeFormat pulls about 5 MiB of ICU locale and zone
 * data into memory, which an idle gateway (or one without these namespaces in use) never needs.
 */
let formats: { day: Intl.DateTimeFormat; hour: Intl.DateTimeFormat } | null = null;
function pacificFormats(): { day: Intl.DateTimeFormat; hour: Intl.DateTimeFormat } {
  formats ??= {
    day: new Intl.DateTimeFormat('en-CA', {
      timeZone: PACIFIC,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    }),
    hour: new Intl.DateTimeFormat('en-US', { timeZone: PACIFIC, hour: 'numeric', hourCycle: 'h23' }),
  };
  return formats;
}

export const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** The Pacific calendar date at instant `ms`. */
export function pacificDate(ms: number): string {
  return pacificFormats().day.format(new Date(ms));
}

export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

/** Whole days from `from` to `to` (positive when `to` is later). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

export function isValidDate(date: string): boolean {
  if (!DATE_PATTERN.test(date)) return false;
  const parsed = new Date(`${date}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === date;
}

/** The UTC instant of Pacific midnight starting `date` (PST = UTC−8, PDT = UTC−7). */
export function pacificMidnight(date: string): Date {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  for (const offset of [7, 8]) {
    const candidate = Date.UTC(y, m - 1, d, offset);
    if (pacificDate(candidate) === date && Number(pacificFormats().hour.format(new Date(candidate))) === 0) {
      return new Date(candidate);
    }
  }
  throw new Error(`no Pacific midnight found for ${date}`);
}
