/** The few shapes every generated table shares, so two tables never format a figure two ways. */

/** A Markdown table; cells are written as given (a missing cell is an empty one). */
export function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${header.map((_, i) => cells[i] ?? '').join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Ours over theirs as the bench prints it: two decimals, trailing zeros dropped, then ×. */
export function times(ratio: number): string {
  return `${Math.round(ratio * 100) / 100}×`;
}

/** `2026-11-26T17:45:16.361Z` as `2026-11-26 17:45 UTC`: a minute is as exact as the prose needs. */
export function utc(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** p50 / p99 pairs as the memory rows write them. */
export function pair(a: number | string, b: number | string, between = ' / '): string {
  return `${a}${between}${b}`;
}

/** One decimal, as the hand-written load averages were given. */
export function oneDecimal(value: number): string {
  return (Math.round(value * 10) / 10).toFixed(1);
}
