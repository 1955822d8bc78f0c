import { z } from 'zod';
import type { ToolDefinition } from '../../mcp/tool.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import {
  API_PAGE,
  checkDate,
  comparePeriods,
  comparisonSchema,
  explicitRange,
  fetchRows,
  filterGroups,
  filterInput,
  lastDays,
  mapRow,
  metadataOf,
  parseAggregation,
  parseRequest,
  rowSchema,
} from './analytics.ts';
import { TOOLS } from './catalog.ts';
import type { QueryBody } from './client.ts';
import { dataState, days, dimensions, requestEcho, requestEchoShape, searchType } from './inputs.ts';
import { type GscToolDeps, siteTool } from './tools-sites.ts';

/** The raw query and period comparison: the two analytics tools with the most arguments. */
export function queryTools(deps: GscToolDeps): ToolDefinition[] {
  return [comparePeriodsTool(deps), queryTool(deps)];
}

const comparePeriodsInput = {
  period1_start: z.string(),
  period1_end: z.string(),
  period2_start: z.string(),
  period2_end: z.string(),
  dimensions,
  limit: z.number().int().optional().describe('Comparisons to return (default 10).'),
  sort_by: z.enum(['period2_clicks', 'clicks_delta', 'abs_clicks_delta']).optional(),
  search_type: searchType,
  data_state: dataState,
  row_limit: z
    .number()
    .int()
    .min(1)
    .max(API_PAGE)
    .optional()
    .describe('Rows fetched per period (default 5,000).'),
};

const comparePeriodsOutput = z.object({
  site_url: z.string(),
  period1: z.tuple([z.string(), z.string()]),
  period2: z.tuple([z.string(), z.string()]),
  dimensions: z.array(z.string()),
  search_type: z.string(),
  summary: z.object({ keys: z.number(), only_period1: z.number(), only_period2: z.number() }),
  comparisons: z.array(comparisonSchema),
});

function comparePeriodsTool(deps: GscToolDeps): ToolDefinition {
  const { client, settings } = deps;
  return siteTool(deps, TOOLS.gsc_compare_periods, {
    thirdPartyText: true,
    input: comparePeriodsInput,
    output: comparePeriodsOutput,
    async run(args, site, signal) {
      const p1 = [
        checkDate(args.period1_start, 'period1_start'),
        checkDate(args.period1_end, 'period1_end'),
      ] as [string, string];
      const p2 = [
        checkDate(args.period2_start, 'period2_start'),
        checkDate(args.period2_end, 'period2_end'),
      ] as [string, string];
      const request = parseRequest(args, undefined, () => settings.dataState);
      const { dimensions: dims, search_type: type, data_state: state } = request;
      const body = (range: [string, string]): QueryBody => ({
        startDate: range[0],
        endDate: range[1],
        dimensions: dims,
        type,
        dataState: state,
        rowLimit: args.row_limit ?? 5000,
      });
      const [r1, r2] = await Promise.all([
        client.query(site, body(p1), signal),
        client.query(site, body(p2), signal),
      ]);
      const all = comparePeriods(
        (r1.rows ?? []).map((r) => mapRow(r, dims)),
        (r2.rows ?? []).map((r) => mapRow(r, dims)),
      );
      const sortBy = args.sort_by ?? 'period2_clicks';
      const score = (c: (typeof all)[number]) =>
        sortBy === 'clicks_delta'
          ? c.clicks_delta
          : sortBy === 'abs_clicks_delta'
            ? Math.abs(c.clicks_delta)
            : (c.period2?.clicks ?? -1) * 1e6 + (c.period1?.clicks ?? 0);
      all.sort((a, b) => score(b) - score(a));
      return {
        site_url: site,
        period1: p1,
        period2: p2,
        dimensions: dims,
        search_type: type,
        summary: {
          keys: all.length,
          only_period1: all.filter((c) => c.status === 'only_period1').length,
          only_period2: all.filter((c) => c.status === 'only_period2').length,
        },
        comparisons: all.slice(0, args.limit === undefined || args.limit <= 0 ? 10 : args.limit),
      };
    },
  });
}

const queryInput = {
  start_date: z.string().optional(),
  end_date: z.string().optional(),
  days,
  dimensions,
  search_type: searchType,
  filters: z.array(filterInput).optional(),
  aggregation_type: z.string().optional().describe('auto, byPage, byProperty or byNewsShowcasePanel.'),
  data_state: dataState,
  start_row: z.number().int().min(0).optional(),
  max_rows: z.number().int().min(1).optional(),
};

const queryOutput = z.object({
  ...requestEchoShape,
  aggregation_type: z.string().nullable(),
  row_count: z.number(),
  truncated: z.boolean(),
  pages_fetched: z.number(),
  rows: z.array(rowSchema),
});

function queryTool(deps: GscToolDeps): ToolDefinition {
  const { client, settings, now } = deps;
  return siteTool(deps, TOOLS.gsc_query, {
    thirdPartyText: true,
    input: queryInput,
    output: queryOutput,
    async run(args, site, signal) {
      const range =
        args.start_date || args.end_date
          ? explicitRange(now(), args.start_date, args.end_date)
          : lastDays(now(), args.days);
      const request = parseRequest(args, [], (dims) =>
        dims.includes('hour') ? 'hourly_all' : settings.dataState,
      );
      const { dimensions: dims, search_type: type, data_state: state } = request;
      if (dims.includes('hour') && state !== 'hourly_all') {
        throw new UpstreamError('INVALID_ARGUMENT', 'The hour dimension needs data_state hourly_all.');
      }
      const maxRows = args.max_rows ?? API_PAGE;
      if (maxRows > settings.maxRows) {
        throw new UpstreamError(
          'INVALID_ARGUMENT',
          `max_rows must be at most ${settings.maxRows} (GSC_MAX_ROWS).`,
        );
      }
      const aggregation = parseAggregation(args.aggregation_type);
      const groups = filterGroups(args.filters ?? []);
      const fetched = await fetchRows(
        client,
        site,
        {
          startDate: range.start,
          endDate: range.end,
          dimensions: dims,
          type,
          dataState: state,
          ...(groups ? { dimensionFilterGroups: groups } : {}),
          ...(aggregation ? { aggregationType: aggregation } : {}),
          ...(args.start_row ? { startRow: args.start_row } : {}),
        },
        maxRows,
        signal,
      );
      return {
        ...requestEcho(site, range, request),
        aggregation_type: fetched.response.responseAggregationType ?? aggregation ?? null,
        row_count: fetched.rows.length,
        truncated: fetched.truncated,
        pages_fetched: fetched.pages,
        rows: fetched.rows.map((r) => mapRow(r, dims)),
        metadata: metadataOf(fetched.response),
      };
    },
  });
}
