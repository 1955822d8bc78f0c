import { z } from 'zod';
import type { ToolDefinition } from '../../mcp/tool.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import {
  API_PAGE,
  explicitRange,
  filterGroups,
  filterInput,
  lastDays,
  mapRow,
  metadataOf,
  parseDataState,
  parseDimensions,
  parseSearchType,
  rowSchema,
  totals,
} from './analytics.ts';
import { TOOLS } from './catalog.ts';
import {
  dataState,
  days,
  dimensions,
  rangeShape,
  requestEcho,
  requestEchoShape,
  searchType,
} from './inputs.ts';
import { type GscToolDeps, siteTool } from './tools-sites.ts';

export function analyticsTools(deps: GscToolDeps): ToolDefinition[] {
  return [
    searchAnalyticsTool(deps),
    advancedSearchAnalyticsTool(deps),
    performanceOverviewTool(deps),
    searchByPageQueryTool(deps),
  ];
}

function searchAnalyticsTool(deps: GscToolDeps): ToolDefinition {
  const { client, settings, now } = deps;
  return siteTool(deps, TOOLS.gsc_search_analytics, {
    thirdPartyText: true,
    input: {
      days,
      dimensions,
      row_limit: z.number().int().optional().describe('Rows to return (default 20, at most 25,000).'),
    },
    output: z.object({
      ...rangeShape,
      dimensions: z.array(z.string()),
      row_count: z.number(),
      rows: z.array(rowSchema),
    }),
    async run(args, site, signal) {
      const range = lastDays(now(), args.days);
      const dims = parseDimensions(args.dimensions);
      const rowLimit = args.row_limit === undefined || args.row_limit <= 0 ? 20 : args.row_limit;
      if (rowLimit > API_PAGE)
        throw new UpstreamError(
          'INVALID_ARGUMENT',
          `row_limit must be at most ${API_PAGE}; use gsc_query with max_rows for more.`,
        );
      const response = await client.query(
        site,
        {
          startDate: range.start,
          endDate: range.end,
          dimensions: dims,
          rowLimit,
          dataState: settings.dataState,
        },
        signal,
      );
      const rows = (response.rows ?? []).map((r) => mapRow(r, dims));
      return {
        site_url: site,
        start_date: range.start,
        end_date: range.end,
        dimensions: dims,
        row_count: rows.length,
        rows,
        metadata: metadataOf(response),
      };
    },
  });
}

const advancedSearchAnalyticsInput = {
  start_date: z.string().optional(),
  end_date: z.string().optional(),
  dimensions,
  search_type: searchType,
  row_limit: z.number().int().optional().describe('1 to 25,000 (default 1,000).'),
  start_row: z.number().int().min(0).optional(),
  sort_by: z.enum(['clicks', 'impressions', 'ctr', 'position']).optional(),
  sort_direction: z.string().optional().describe('asc or desc (default desc).'),
  filter_dimension: z.string().optional(),
  filter_operator: z.string().optional(),
  filter_expression: z.string().optional(),
  filters: z.array(filterInput).optional(),
  data_state: dataState,
};

const advancedSearchAnalyticsOutput = z.object({
  ...requestEchoShape,
  filters_applied: z.array(z.object({ dimension: z.string(), operator: z.string(), expression: z.string() })),
  start_row: z.number(),
  row_limit: z.number(),
  row_count: z.number(),
  has_more: z.boolean(),
  next_start_row: z.number().nullable(),
  rows: z.array(rowSchema),
});

function advancedSearchAnalyticsTool(deps: GscToolDeps): ToolDefinition {
  return siteTool(deps, TOOLS.gsc_advanced_search_analytics, {
    thirdPartyText: true,
    input: advancedSearchAnalyticsInput,
    output: advancedSearchAnalyticsOutput,
    async run(args, site, signal) {
      const range = explicitRange(deps.now(), args.start_date, args.end_date);
      const dims = parseDimensions(args.dimensions);
      const rowLimit =
        args.row_limit === undefined || args.row_limit <= 0 ? 1000 : Math.min(args.row_limit, API_PAGE);
      const startRow = args.start_row ?? 0;
      const filters = [...(args.filters ?? [])];
      if (args.filter_dimension && args.filter_expression) {
        filters.push({
          dimension: args.filter_dimension,
          expression: args.filter_expression,
          ...(args.filter_operator ? { operator: args.filter_operator } : {}),
        });
      }
      const groups = filterGroups(filters);
      const type = parseSearchType(args.search_type);
      const state = parseDataState(args.data_state, deps.settings.dataState);
      const response = await deps.client.query(
        site,
        {
          startDate: range.start,
          endDate: range.end,
          dimensions: dims,
          type,
          rowLimit,
          startRow,
          dataState: state,
          ...(groups ? { dimensionFilterGroups: groups } : {}),
        },
        signal,
      );
      const rows = (response.rows ?? []).map((r) => mapRow(r, dims));
      if (args.sort_by) {
        const key = args.sort_by;
        const sign = /^asc/i.test(args.sort_direction ?? '') ? 1 : -1;
        rows.sort((a, b) => sign * (a[key] - b[key]));
      }
      const hasMore = rows.length === rowLimit;
      return {
        ...requestEcho(site, range, { dimensions: dims, search_type: type, data_state: state }),
        filters_applied: groups?.[0]?.filters ?? [],
        start_row: startRow,
        row_limit: rowLimit,
        row_count: rows.length,
        has_more: hasMore,
        next_start_row: hasMore ? startRow + rows.length : null,
        rows,
        metadata: metadataOf(response),
      };
    },
  });
}

function performanceOverviewTool(deps: GscToolDeps): ToolDefinition {
  const { client, settings, now } = deps;
  return siteTool(deps, TOOLS.gsc_performance_overview, {
    input: { days },
    output: z.object({
      ...rangeShape,
      totals: rowSchema.omit({ keys: true }),
      daily_trend: z.array(
        z.object({
          date: z.string(),
          clicks: z.number(),
          impressions: z.number(),
          ctr: z.number(),
          position: z.number(),
        }),
      ),
    }),
    async run(args, site, signal) {
      const range = lastDays(now(), args.days);
      const base = { startDate: range.start, endDate: range.end, dataState: settings.dataState };
      const [overall, daily] = await Promise.all([
        client.query(site, { ...base, rowLimit: 1 }, signal),
        client.query(site, { ...base, dimensions: ['date'], rowLimit: 1000 }, signal),
      ]);
      const total = overall.rows?.[0];
      const trend = (daily.rows ?? [])
        .map((r) => ({ date: r.keys?.[0] ?? '', ...mapRow(r, []) }))
        .sort((a, b) => a.date.localeCompare(b.date));
      return {
        site_url: site,
        start_date: range.start,
        end_date: range.end,
        totals: total ? mapRow(total, []) : totals([]),
        daily_trend: trend,
        metadata: metadataOf(daily),
      };
    },
  });
}

function searchByPageQueryTool(deps: GscToolDeps): ToolDefinition {
  const { client, settings, now } = deps;
  return siteTool(deps, TOOLS.gsc_search_by_page_query, {
    thirdPartyText: true,
    input: {
      page_url: z.string().min(1),
      days,
      row_limit: z.number().int().optional().describe('Default 20, at most 25,000.'),
    },
    output: z.object({
      ...rangeShape,
      page_url: z.string(),
      totals: rowSchema.omit({ keys: true }),
      row_count: z.number(),
      rows: z.array(rowSchema),
    }),
    async run(args, site, signal) {
      const range = lastDays(now(), args.days);
      const rowLimit = Math.min(
        args.row_limit === undefined || args.row_limit <= 0 ? 20 : args.row_limit,
        API_PAGE,
      );
      const base = {
        startDate: range.start,
        endDate: range.end,
        dataState: settings.dataState,
        dimensionFilterGroups: filterGroups([
          { dimension: 'page', operator: 'equals', expression: args.page_url },
        ]),
      };
      const [byQuery, overall] = await Promise.all([
        client.query(site, { ...base, dimensions: ['query'], rowLimit }, signal),
        client.query(site, { ...base, rowLimit: 1 }, signal),
      ]);
      const rows = (byQuery.rows ?? []).map((r) => mapRow(r, ['query']));
      const total = overall.rows?.[0];
      return {
        site_url: site,
        page_url: args.page_url,
        start_date: range.start,
        end_date: range.end,
        totals: total ? mapRow(total, []) : totals([]),
        row_count: rows.length,
        rows,
        metadata: metadataOf(byQuery),
      };
    },
  });
}
