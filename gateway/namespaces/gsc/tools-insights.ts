/** Analyses built on search analytics rows. Heuristics, labelled as such in their results. */
import { z } from 'zod';
import type { ToolDefinition } from '../../mcp/tool.ts';
import { addDays } from '../../upstream/pacific.ts';
import type { ToolAbout } from '../../upstream/tool-catalog.ts';
import { API_PAGE, comparePeriods, fetchRows, lastDays, mapRow, type Row, rowSchema } from './analytics.ts';
import { TOOLS } from './catalog.ts';
import { type GscToolDeps, siteTool } from './tools-sites.ts';

/** Rough organic CTR by position (percent), used only to flag pages far below it. */
function expectedCtr(position: number): number {
  const curve = [28, 15, 10, 7, 5, 4, 3, 2.5, 2, 1.8];
  const index = Math.max(1, Math.round(position)) - 1;
  return curve[index] ?? 1;
}

const days = z
  .number()
  .int()
  .optional()
  .describe('Complete Pacific-time days ending yesterday (default 28).');
const limit = z.number().int().min(1).max(500).optional().describe('Items per list (default 20).');

export function insightTools(deps: GscToolDeps): ToolDefinition[] {
  return [findOpportunitiesTool(deps), contentDecayTool(deps), cannibalizationTool(deps)];
}

type InsightShape<Shape extends z.ZodRawShape> = Shape & { days: typeof days; limit: typeof limit };

interface InsightSpec<Shape extends z.ZodRawShape, Out extends z.ZodType> {
  /** The arguments between `days` (first) and `limit` (last), which every analysis takes. */
  input: Shape;
  output: Out;
  run(
    args: z.output<z.ZodObject<InsightShape<Shape>>>,
    site: string,
    signal: AbortSignal,
  ): Promise<z.output<Out>>;
}

function insightTool<Shape extends z.ZodRawShape, Out extends z.ZodType>(
  deps: GscToolDeps,
  about: ToolAbout,
  spec: InsightSpec<Shape, Out>,
): ToolDefinition {
  const input = { days, ...spec.input, limit } as InsightShape<Shape>;
  // Every analysis lists queries or pages.
  return siteTool(deps, about, { input, output: spec.output, run: spec.run, thirdPartyText: true });
}

/** rows, bound to the namespace's clients: the tools that share it build it here. */
function rowsOf(deps: GscToolDeps) {
  const { client, settings } = deps;
  async function rows(
    site: string,
    start: string,
    end: string,
    dims: string[],
    signal: AbortSignal,
  ): Promise<Row[]> {
    const fetched = await fetchRows(
      client,
      site,
      { startDate: start, endDate: end, dimensions: dims, dataState: settings.dataState },
      Math.min(API_PAGE, settings.maxRows),
      signal,
    );
    return fetched.rows.map((r) => mapRow(r, dims));
  }
  return rows;
}

function findOpportunitiesTool(deps: GscToolDeps): ToolDefinition {
  const rows = rowsOf(deps);
  return insightTool(deps, TOOLS.gsc_find_opportunities, {
    input: { min_impressions: z.number().int().min(0).optional() },
    output: z.object({
      site_url: z.string(),
      start_date: z.string(),
      end_date: z.string(),
      striking_distance: z.array(rowSchema),
      low_ctr: z.array(rowSchema.extend({ expected_ctr: z.number() })),
      method: z.string(),
    }),
    async run(args, site, signal) {
      const range = lastDays(deps.now(), args.days);
      const minImpressions = args.min_impressions ?? 100;
      const n = args.limit ?? 20;
      const all = (await rows(site, range.start, range.end, ['query', 'page'], signal)).filter(
        (r) => r.impressions >= minImpressions,
      );
      const byImpressions = (a: Row, b: Row) => b.impressions - a.impressions;
      return {
        site_url: site,
        start_date: range.start,
        end_date: range.end,
        striking_distance: all
          .filter((r) => r.position >= 4 && r.position <= 20)
          .sort(byImpressions)
          .slice(0, n),
        low_ctr: all
          .map((r) => ({ ...r, expected_ctr: expectedCtr(r.position) }))
          .filter((r) => r.position <= 10 && r.ctr < r.expected_ctr / 2)
          .sort(byImpressions)
          .slice(0, n),
        method:
          'striking distance: position 4–20; low CTR: CTR below half of a typical CTR curve for the position (top 10 only).',
      };
    },
  });
}

function contentDecayTool(deps: GscToolDeps): ToolDefinition {
  const rows = rowsOf(deps);
  return insightTool(deps, TOOLS.gsc_content_decay, {
    input: {
      min_clicks: z.number().int().min(0).optional(),
      min_drop_pct: z.number().min(0).max(100).optional(),
    },
    output: z.object({
      site_url: z.string(),
      current: z.tuple([z.string(), z.string()]),
      previous: z.tuple([z.string(), z.string()]),
      pages: z.array(
        z.object({
          page: z.string(),
          previous_clicks: z.number(),
          current_clicks: z.number(),
          clicks_lost: z.number(),
          drop_pct: z.number(),
          position_delta: z.number().nullable(),
        }),
      ),
    }),
    async run(args, site, signal) {
      const current = lastDays(deps.now(), args.days);
      const previousEnd = addDays(current.start, -1);
      const previousStart = addDays(previousEnd, -(current.days - 1));
      const [before, after] = await Promise.all([
        rows(site, previousStart, previousEnd, ['page'], signal),
        rows(site, current.start, current.end, ['page'], signal),
      ]);
      const minClicks = args.min_clicks ?? 10;
      const minDrop = args.min_drop_pct ?? 20;
      const pages = comparePeriods(before, after)
        .filter((c) => c.period1 && c.period1.clicks >= minClicks && c.clicks_pct_change !== null)
        .filter((c) => -(c.clicks_pct_change ?? 0) >= minDrop)
        .map((c) => ({
          page: c.keys.page ?? '',
          previous_clicks: c.period1?.clicks ?? 0,
          current_clicks: c.period2?.clicks ?? 0,
          clicks_lost: -c.clicks_delta,
          drop_pct: -(c.clicks_pct_change ?? 0),
          position_delta: c.position_delta,
        }))
        .sort((a, b) => b.clicks_lost - a.clicks_lost)
        .slice(0, args.limit ?? 20);
      return {
        site_url: site,
        current: [current.start, current.end] as [string, string],
        previous: [previousStart, previousEnd] as [string, string],
        pages,
      };
    },
  });
}

const cannibalizationInput = {
  min_impressions: z.number().int().min(0).optional().describe('Per query (default 50).'),
  min_share_pct: z.number().min(0).max(100).optional(),
};

const cannibalizationOutput = z.object({
  site_url: z.string(),
  start_date: z.string(),
  end_date: z.string(),
  queries: z.array(
    z.object({
      query: z.string(),
      impressions: z.number(),
      clicks: z.number(),
      pages: z.array(
        z.object({
          page: z.string(),
          impressions: z.number(),
          clicks: z.number(),
          position: z.number(),
          share_pct: z.number(),
        }),
      ),
    }),
  ),
  label: z.string(),
});

function cannibalizationTool(deps: GscToolDeps): ToolDefinition {
  const rows = rowsOf(deps);
  return insightTool(deps, TOOLS.gsc_cannibalization, {
    input: cannibalizationInput,
    output: cannibalizationOutput,
    async run(args, site, signal) {
      const range = lastDays(deps.now(), args.days);
      const minImpressions = args.min_impressions ?? 50;
      const minShare = args.min_share_pct ?? 10;
      const byQuery = new Map<string, Row[]>();
      for (const row of await rows(site, range.start, range.end, ['query', 'page'], signal)) {
        const query = row.keys?.query ?? '';
        byQuery.set(query, [...(byQuery.get(query) ?? []), row]);
      }
      const queries = [];
      for (const [query, list] of byQuery) {
        const impressions = list.reduce((s, r) => s + r.impressions, 0);
        if (impressions < minImpressions) continue;
        const pages = list
          .map((r) => ({
            page: r.keys?.page ?? '',
            impressions: r.impressions,
            clicks: r.clicks,
            position: r.position,
            share_pct: Math.round((r.impressions / impressions) * 10_000) / 100,
          }))
          .filter((p) => p.share_pct >= minShare)
          .sort((a, b) => b.impressions - a.impressions);
        if (pages.length >= 2) {
          queries.push({ query, impressions, clicks: list.reduce((s, r) => s + r.clicks, 0), pages });
        }
      }
      queries.sort((a, b) => b.impressions - a.impressions);
      return {
        site_url: site,
        start_date: range.start,
        end_date: range.end,
        queries: queries.slice(0, args.limit ?? 20),
        label:
          'possible cannibalization: several pages compete for the same query; check intent before merging pages',
      };
    },
  });
}
