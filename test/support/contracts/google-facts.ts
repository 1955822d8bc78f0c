/** The fact table the Search Console contract server groups, filters, sorts and pages. */
import { addDays } from '../../../gateway/upstream/pacific.ts';

export interface Fact {
  date: string;
  query: string;
  page: string;
  country: string;
  device: string;
  clicks: number;
  impressions: number;
  position: number;
}

export const SITE = 'sc-domain:example.com';
export const PREFIX_SITE = 'https://www.example.com/';
export const BIG_SITE = 'sc-domain:big.example';
export const P = (path: string) => `https://example.com${path}`;

/** Fixture days: the 90 Pacific days ending today, so tools computing "last N days" find data. */
export function buildFacts(today: string): Map<string, Fact[]> {
  const main: Fact[] = [];
  const big: Fact[] = [];
  for (let i = 0; i < 90; i++) {
    const date = addDays(today, -i);
    const f = (
      query: string,
      page: string,
      clicks: number,
      impressions: number,
      position: number,
      device = 'MOBILE',
    ) => main.push({ date, query, page: P(page), country: 'usa', device, clicks, impressions, position });
    f('widgets', '/widgets', 10, 100, 3);
    f('widgets', '/widgets', 5, 50, 4, 'DESKTOP');
    f('blue widgets', '/widgets', 0, 200, 8);
    f('widget guide', '/guide', i <= 28 ? 5 : 20, 100, 5);
    f('cheap widgets', '/widgets', 1, 50, 6);
    f('cheap widgets', '/cheap', 1, 60, 7);
    if (i < 14) f('new thing', '/new', 3, 30, 9);
    if (i >= 60) f('old thing', '/old', 4, 40, 12);
    if (i < 84) {
      for (let q = 0; q < 300; q++) {
        big.push({
          date,
          query: `q${q}`,
          page: 'https://big.example/',
          country: 'usa',
          device: 'MOBILE',
          clicks: q % 7,
          impressions: 10,
          position: 5,
        });
      }
    }
  }
  return new Map([
    [SITE, main],
    [
      PREFIX_SITE,
      main
        .slice(0, 10)
        .map((x) => ({ ...x, page: x.page.replace('https://example.com', 'https://www.example.com') })),
    ],
    [BIG_SITE, big],
  ]);
}
