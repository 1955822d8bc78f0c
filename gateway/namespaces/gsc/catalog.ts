/** What tools/list says about each gsc tool besides its schemas: said here only. */
import { toolCatalog } from '../../upstream/tool-catalog.ts';

/** URL Inspection limits, stated in a description and enforced by the inspect tools. */
export const MAX_BATCH_URLS = 50;
export const INSPECT_CONCURRENCY = 5;

export const TOOLS = toolCatalog({
  gsc_list_properties: [
    'read',
    'List Search Console properties',
    'Lists the properties the credentials can access, with permission levels. Use the exact site_url strings it returns in the other tools.',
  ],
  gsc_get_site_details: ['read', 'Get one Search Console property', "One property's permission level."],
  gsc_add_site: [
    'write',
    'Add a Search Console property',
    'Adds a property to the account (it still needs verification in Search Console). Needs GSC_ALLOW_WRITE=true.',
  ],
  gsc_delete_site: [
    'destroy',
    'Remove a Search Console property',
    'Removes a property from the account. Needs GSC_ALLOW_DESTRUCTIVE=true.',
  ],
  gsc_list_sitemaps: [
    'read',
    'List sitemaps of a property',
    'Sitemaps submitted for a property (or the children of sitemap_index) with status, warnings, errors and submitted/indexed counts.',
  ],
  gsc_get_sitemap: ['read', 'Get one sitemap', 'Status of one submitted sitemap.'],
  gsc_submit_sitemap: [
    'write',
    'Submit a sitemap',
    'Submits (or re-submits) a sitemap for crawling. Needs GSC_ALLOW_WRITE=true.',
  ],
  gsc_delete_sitemap: [
    'destroy',
    'Delete a sitemap',
    'Removes a sitemap from the property (the file itself is untouched). Needs GSC_ALLOW_DESTRUCTIVE=true.',
  ],
  gsc_search_analytics: [
    'read',
    'Top search analytics rows for the last N days',
    'Clicks, impressions, CTR (percent) and average position for the last N complete Pacific-time days, grouped by dimensions, top row_limit rows by clicks.',
  ],
  gsc_advanced_search_analytics: [
    'read',
    'Search analytics with dates, filters, search type and paging',
    'One page of search analytics rows for explicit dates (default: the 28 complete days ending yesterday, Pacific time), with a filter (filter_dimension/filter_operator/filter_expression, or several AND filters in `filters`), search type, data state and start_row paging. sort_by re-sorts only the returned page; has_more/next_start_row say whether more rows exist.',
  ],
  gsc_performance_overview: [
    'read',
    'Totals and daily trend',
    'Totals (exact, from a query without dimensions) and the daily trend for the last N complete Pacific-time days.',
  ],
  gsc_search_by_page_query: [
    'read',
    'Queries that bring visitors to one page',
    'The queries leading to one page over the last N complete days, with the page totals.',
  ],
  gsc_compare_periods: [
    'read',
    'Compare two date ranges per key',
    'Per-key clicks/impressions/position for two periods and their deltas. Keys present in one period only are kept with null for the other period (status only_period1/only_period2); percentage change is null when period 1 had no clicks.',
  ],
  gsc_query: [
    'read',
    'Search analytics: the full request',
    'Every searchAnalytics.query field: dates, dimensions (incl. hour with data_state hourly_all), search_type, several AND filters with all six operators, aggregation_type, data_state. Pages automatically past 25,000 rows up to max_rows (default 25,000; hard cap from GSC_MAX_ROWS) and says truncated when rows were left.',
  ],
  gsc_inspect_url: [
    'read',
    'Inspect one URL',
    "Google's index status of one URL of the property: verdict, coverage, canonical URLs, robots.txt, fetch state, last crawl, sitemaps, rich-result items and issues.",
  ],
  gsc_batch_inspect_urls: [
    'read',
    'Inspect up to 50 URLs',
    `Inspects up to ${MAX_BATCH_URLS} URLs, ${INSPECT_CONCURRENCY} at a time. A URL that fails gets its own error entry; the others still answer.`,
  ],
  gsc_check_indexing_issues: [
    'read',
    'Audit indexing of up to 50 URLs',
    'Inspects up to 50 URLs and summarises: indexed (verdict PASS), not indexed, canonical mismatches, robots.txt blocks, fetch failures and URLs that could not be inspected.',
  ],
  gsc_find_opportunities: [
    'read',
    'Find quick-win queries',
    'Striking-distance queries (average position 4–20 with at least min_impressions) and high-impression queries whose CTR is under half the typical CTR for their position. Ranked by impressions; heuristics, not guarantees.',
  ],
  gsc_content_decay: [
    'read',
    'Pages losing clicks',
    'Compares each page over the last N complete days with the N days before; lists pages whose clicks fell by at least min_drop_pct (default 20) from at least min_clicks (default 10). Ranked by clicks lost.',
  ],
  gsc_cannibalization: [
    'read',
    'Queries split across several pages',
    'Queries for which two or more pages of the property each get at least min_share_pct (default 10) of the impressions: possible keyword cannibalization, for a human to judge.',
  ],
});
