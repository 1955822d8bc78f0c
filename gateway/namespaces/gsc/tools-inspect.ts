import { z } from 'zod';
import { type ToolDefinition, ToolError } from '../../mcp/tool.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import type { ToolAbout } from '../../upstream/tool-catalog.ts';
import { INSPECT_CONCURRENCY, MAX_BATCH_URLS, TOOLS } from './catalog.ts';
import { type GscToolDeps, siteTool } from './tools-sites.ts';

type Obj = Record<string, unknown>;
const str = (v: unknown) => (typeof v === 'string' ? v : null);
const arr = (v: unknown) => (Array.isArray(v) ? (v as unknown[]).map(String) : []);

/** The index-status fields, each a string or null: our name, then Google's; result and schema read it. */
const INDEX_STATUS = {
  verdict: 'verdict',
  coverage_state: 'coverageState',
  indexing_state: 'indexingState',
  last_crawl_time: 'lastCrawlTime',
  crawled_as: 'crawledAs',
  google_canonical: 'googleCanonical',
  user_canonical: 'userCanonical',
  robots_txt_state: 'robotsTxtState',
  page_fetch_state: 'pageFetchState',
} as const;
type IndexStatusField = keyof typeof INDEX_STATUS;
const indexStatusFields = Object.keys(INDEX_STATUS) as IndexStatusField[];

function indexStatus(idx: Obj): Record<IndexStatusField, string | null> {
  return Object.fromEntries(indexStatusFields.map((ours) => [ours, str(idx[INDEX_STATUS[ours]])])) as Record<
    IndexStatusField,
    string | null
  >;
}

function flattenInspection(url: string, result: Obj | undefined) {
  const idx = (result?.indexStatusResult ?? {}) as Obj;
  const rich = (result?.richResultsResult ?? {}) as Obj;
  const amp = (result?.ampResult ?? {}) as Obj;
  const detected = Array.isArray(rich.detectedItems) ? (rich.detectedItems as Obj[]) : [];
  return {
    url,
    ...indexStatus(idx),
    referring_urls: arr(idx.referringUrls),
    sitemaps: arr(idx.sitemap),
    rich_results_verdict: str(rich.verdict),
    rich_results: detected.map((d) => ({
      type: str(d.richResultType),
      items: (Array.isArray(d.items) ? (d.items as Obj[]) : []).map((item) => ({
        name: str(item.name),
        issues: (Array.isArray(item.issues) ? (item.issues as Obj[]) : []).map((issue) => ({
          message: str(issue.issueMessage),
          severity: str(issue.severity),
        })),
      })),
    })),
    amp_verdict: str(amp.verdict),
    report_link: str(result?.inspectionResultLink),
  };
}

const inspectionSchema = z.object({
  url: z.string(),
  ...(Object.fromEntries(indexStatusFields.map((field) => [field, z.string().nullable()])) as Record<
    IndexStatusField,
    z.ZodNullable<z.ZodString>
  >),
  referring_urls: z.array(z.string()),
  sitemaps: z.array(z.string()),
  rich_results_verdict: z.string().nullable(),
  rich_results: z.array(z.unknown()),
  amp_verdict: z.string().nullable(),
  report_link: z.string().nullable(),
});
const batchItem = inspectionSchema
  .partial()
  .extend({ url: z.string(), error: z.string().optional(), error_code: z.string().optional() });

/**
 * The origin's `urls` string split on commas broke URLs that contain commas: a string is split
 * on newlines, and on commas only where the next item starts with http(s)://.
 */
function parseUrls(value: string | string[]): string[] {
  const items = Array.isArray(value) ? value : value.split(/\s*\n\s*|,\s*(?=https?:\/\/)/);
  return [...new Set(items.map((u) => u.trim()).filter(Boolean))];
}

async function mapPool<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

const urlsInput = z
  .union([z.string(), z.array(z.string())])
  .describe(`Up to ${MAX_BATCH_URLS} URLs: an array, or a newline-separated string.`);
const languageCode = z
  .string()
  .optional()
  .describe('BCP-47 language for translated issue messages, e.g. en-US.');

export function inspectTools(deps: GscToolDeps): ToolDefinition[] {
  return [inspectUrlTool(deps), batchInspectUrlsTool(deps), checkIndexingIssuesTool(deps)];
}

function inspectUrlTool(deps: GscToolDeps): ToolDefinition {
  const { client } = deps;
  return siteTool(deps, TOOLS.gsc_inspect_url, {
    thirdPartyText: true,
    input: { page_url: z.string().min(1), language_code: languageCode },
    output: inspectionSchema,
    async run(args, site, signal) {
      const response = await client.inspect(site, args.page_url, args.language_code, signal);
      return flattenInspection(args.page_url, response.inspectionResult);
    },
  });
}

/** batch, bound to the namespace's client: the tools that share it build it here. */
function batchOf(deps: GscToolDeps) {
  const { client } = deps;
  async function batch(
    site: string,
    urlsArg: string | string[],
    lang: string | undefined,
    signal: AbortSignal,
  ) {
    const urls = parseUrls(urlsArg);
    if (urls.length === 0)
      throw new UpstreamError('INVALID_ARGUMENT', 'urls is empty: give at least one URL.');
    if (urls.length > MAX_BATCH_URLS) {
      throw new UpstreamError(
        'INVALID_ARGUMENT',
        `urls holds ${urls.length} URLs; at most ${MAX_BATCH_URLS} per call (URL Inspection allows 2,000 per property per day). Split the list.`,
      );
    }
    const results = await mapPool(urls, INSPECT_CONCURRENCY, async (url) => {
      try {
        return flattenInspection(url, (await client.inspect(site, url, lang, signal)).inspectionResult);
      } catch (error) {
        if (signal.aborted) throw error;
        const e = error as ToolError;
        return { url, error: e.message, ...(e instanceof ToolError ? { error_code: e.code } : {}) };
      }
    });
    return results;
  }
  return batch;
}

type BatchItem = Awaited<ReturnType<ReturnType<typeof batchOf>>>[number];

/**
 * The two batch tools: the same input and inspection run, answered as `{ site_url, ...summary,
 * results }` with each its own summary.
 */
function batchTool(
  deps: GscToolDeps,
  about: ToolAbout,
  summaryShape: z.ZodRawShape,
  summarize: (results: BatchItem[]) => Record<string, unknown>,
): ToolDefinition {
  const batch = batchOf(deps);
  return siteTool(deps, about, {
    thirdPartyText: true,
    input: { urls: urlsInput, language_code: languageCode },
    output: z.object({ site_url: z.string(), ...summaryShape, results: z.array(batchItem) }),
    async run(args, site, signal) {
      const results = await batch(site, args.urls, args.language_code, signal);
      return { site_url: site, ...summarize(results), results };
    },
  });
}

function batchInspectUrlsTool(deps: GscToolDeps): ToolDefinition {
  return batchTool(
    deps,
    TOOLS.gsc_batch_inspect_urls,
    { count: z.number(), error_count: z.number() },
    (results) => ({ count: results.length, error_count: results.filter((r) => 'error' in r).length }),
  );
}

const indexingSummary = z.object({
  total: z.number(),
  indexed: z.number(),
  not_indexed: z.number(),
  canonical_mismatch: z.array(z.string()),
  robots_blocked: z.array(z.string()),
  fetch_failed: z.array(z.string()),
  errored: z.array(z.string()),
});

function checkIndexingIssuesTool(deps: GscToolDeps): ToolDefinition {
  return batchTool(deps, TOOLS.gsc_check_indexing_issues, { summary: indexingSummary }, (results) => {
    const ok = results.filter((r): r is ReturnType<typeof flattenInspection> => !('error' in r));
    return {
      summary: {
        total: results.length,
        indexed: ok.filter((r) => r.verdict === 'PASS').length,
        not_indexed: ok.filter((r) => r.verdict !== 'PASS').length,
        canonical_mismatch: ok
          .filter((r) => r.google_canonical && r.user_canonical && r.google_canonical !== r.user_canonical)
          .map((r) => r.url),
        robots_blocked: ok
          .filter((r) => r.robots_txt_state && r.robots_txt_state !== 'ALLOWED')
          .map((r) => r.url),
        fetch_failed: ok
          .filter((r) => r.page_fetch_state && r.page_fetch_state !== 'SUCCESSFUL')
          .map((r) => r.url),
        errored: results.filter((r) => 'error' in r).map((r) => r.url),
      },
    };
  });
}
