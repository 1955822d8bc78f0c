import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../../mcp/tool.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import { requireReady, untrustedField, untrustedNotice } from '../../upstream/namespace-kit.ts';
import type { ToolAbout } from '../../upstream/tool-catalog.ts';
import { TOOLS } from './catalog.ts';
import type { GscClient } from './client.ts';
import type { GscSettings } from './settings.ts';

export interface GscToolDeps {
  client: GscClient;
  settings: GscSettings;
  now: () => number;
  /** Checks readiness and the property allowlist; returns the property to use. */
  site(siteUrl: string): string;
  ready(): void;
}

export function makeDeps(client: GscClient, settings: GscSettings, now: () => number): GscToolDeps {
  const ready = () => requireReady(settings.readiness, 'gsc');
  return {
    client,
    settings,
    now,
    ready,
    site(siteUrl) {
      ready();
      const site = siteUrl.trim();
      if (settings.allowedSites.length && !settings.allowedSites.includes(site)) {
        throw new UpstreamError(
          'PERMISSION_DENIED',
          `${site} is not in GSC_ALLOWED_SITES on this gateway. Allowed: ${settings.allowedSites.join(', ')}.`,
        );
      }
      return site;
    },
  };
}

export const siteUrl = z
  .string()
  .min(1)
  .describe(
    'Property exactly as Search Console names it: "sc-domain:example.com" or "https://www.example.com/" (trailing slash).',
  );
/**
 * Search queries are typed by anyone who uses Google, and referring URLs are chosen by whoever
 * links to the site: text a stranger can aim at the agent reading the report.
 */
export const GSC_UNTRUSTED = untrustedNotice(
  'Google Search (search queries typed by anyone, page URLs, referring and canonical URLs)',
);

interface SiteToolSpec<Shape extends z.ZodRawShape, Out extends z.ZodType> {
  /** The arguments after `site_url`, which every tool about one property takes first. */
  input: Shape;
  output: Out;
  /** The result quotes third-party text (queries, URLs): it carries `untrusted_content`. */
  thirdPartyText?: boolean;
  /** The handler, given the property already checked for readiness and the allowlist. */
  run(args: z.output<z.ZodObject<Shape>>, site: string, signal: AbortSignal): Promise<z.output<Out>>;
}

/** A tool about one property: `site_url` first in its input, checked before anything else runs. */
export function siteTool<Shape extends z.ZodRawShape, Out extends z.ZodType>(
  deps: GscToolDeps,
  about: ToolAbout,
  spec: SiteToolSpec<Shape, Out>,
): ToolDefinition {
  const marked = spec.thirdPartyText === true;
  return defineTool({
    ...about,
    input: z.object({ site_url: siteUrl, ...spec.input }),
    output: marked
      ? (spec.output as unknown as z.ZodObject).extend({ untrusted_content: untrustedField })
      : spec.output,
    handler: async (args, { signal }) => {
      const result = await spec.run(
        args as never,
        deps.site((args as { site_url: string }).site_url),
        signal,
      );
      return marked ? { ...(result as object), untrusted_content: GSC_UNTRUSTED } : result;
    },
  });
}

const sitemapUrl = z
  .string()
  .min(1)
  .describe('Full URL of the sitemap, e.g. https://www.example.com/sitemap.xml');

function gate(settings: GscSettings, kind: 'write' | 'delete', tool: string): void {
  const [enabled, name] =
    kind === 'write'
      ? [settings.allowWrite, 'GSC_ALLOW_WRITE']
      : [settings.allowDestructive, 'GSC_ALLOW_DESTRUCTIVE'];
  if (!enabled) {
    throw new UpstreamError(
      'PERMISSION_DENIED',
      `${tool} is disabled on this gateway: the operator must set ${name}=true (and restart) to allow it.`,
    );
  }
}

/** int64 fields arrive as JSON strings ("12"); absent ones become null, not 0. */
export function int64(value: unknown): number | null {
  if (value === undefined || value === null || value === '') return null;
  const n = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(n) ? n : null;
}

function mapSitemap(raw: Record<string, unknown>) {
  const contents = Array.isArray(raw.contents) ? (raw.contents as Array<Record<string, unknown>>) : [];
  return {
    path: String(raw.path ?? ''),
    type: (raw.type as string | undefined) ?? null,
    last_submitted: (raw.lastSubmitted as string | undefined) ?? null,
    last_downloaded: (raw.lastDownloaded as string | undefined) ?? null,
    is_pending: raw.isPending === true,
    is_sitemaps_index: raw.isSitemapsIndex === true,
    warnings: int64(raw.warnings),
    errors: int64(raw.errors),
    contents: contents.map((c) => ({
      type: (c.type as string | undefined) ?? null,
      submitted: int64(c.submitted),
      indexed: int64(c.indexed),
    })),
  };
}

const sitemapSchema = z.object({
  path: z.string(),
  type: z.string().nullable(),
  last_submitted: z.string().nullable(),
  last_downloaded: z.string().nullable(),
  is_pending: z.boolean(),
  is_sitemaps_index: z.boolean(),
  warnings: z.number().nullable(),
  errors: z.number().nullable(),
  contents: z.array(
    z.object({
      type: z.string().nullable(),
      submitted: z.number().nullable(),
      indexed: z.number().nullable(),
    }),
  ),
});
const statusResult = z.object({ status: z.literal('ok'), site_url: z.string(), message: z.string() });

export function siteTools(deps: GscToolDeps): ToolDefinition[] {
  return [
    listPropertiesTool(deps),
    getSiteDetailsTool(deps),
    changeTool(deps, ADD_SITE),
    changeTool(deps, DELETE_SITE),
    listSitemapsTool(deps),
    getSitemapTool(deps),
    changeTool(deps, SUBMIT_SITEMAP),
    changeTool(deps, DELETE_SITEMAP),
  ];
}

function listPropertiesTool(deps: GscToolDeps): ToolDefinition {
  const { client, settings } = deps;
  return defineTool({
    ...TOOLS.gsc_list_properties,
    input: z.object({}),
    output: z.object({
      count: z.number(),
      properties: z.array(z.object({ site_url: z.string(), permission_level: z.string() })),
    }),
    async handler(_args, { signal }) {
      deps.ready();
      const sites = (await client.listSites(signal)).siteEntry ?? [];
      const properties = sites
        .filter((s) => !settings.allowedSites.length || settings.allowedSites.includes(s.siteUrl))
        .map((s) => ({ site_url: s.siteUrl, permission_level: s.permissionLevel }));
      return { count: properties.length, properties };
    },
  });
}

function getSiteDetailsTool(deps: GscToolDeps): ToolDefinition {
  const { client } = deps;
  return siteTool(deps, TOOLS.gsc_get_site_details, {
    input: {},
    output: z.object({ site_url: z.string(), permission_level: z.string() }),
    async run(_args, site, signal) {
      const entry = await client.getSite(site, signal);
      return { site_url: entry.siteUrl ?? site, permission_level: entry.permissionLevel };
    },
  });
}

function listSitemapsTool(deps: GscToolDeps): ToolDefinition {
  const { client } = deps;
  return siteTool(deps, TOOLS.gsc_list_sitemaps, {
    input: { sitemap_index: z.string().optional() },
    output: z.object({
      site_url: z.string(),
      count: z.number(),
      pending_count: z.number(),
      sitemaps: z.array(sitemapSchema),
    }),
    async run(args, site, signal) {
      const sitemaps = ((await client.listSitemaps(site, args.sitemap_index, signal)).sitemap ?? []).map(
        mapSitemap,
      );
      return {
        site_url: site,
        count: sitemaps.length,
        pending_count: sitemaps.filter((s) => s.is_pending).length,
        sitemaps,
      };
    },
  });
}

function getSitemapTool(deps: GscToolDeps): ToolDefinition {
  const { client } = deps;
  return siteTool(deps, TOOLS.gsc_get_sitemap, {
    input: { sitemap_url: sitemapUrl },
    output: sitemapSchema.extend({ site_url: z.string() }),
    async run(args, site, signal) {
      return { site_url: site, ...mapSitemap(await client.getSitemap(site, args.sitemap_url, signal)) };
    },
  });
}

/** A tool that changes the account: one property, or one sitemap of it. */
interface Change {
  about: ToolAbout;
  sitemap: boolean;
  run(client: GscClient, site: string, sitemap: string, signal: AbortSignal): Promise<unknown>;
  message(sitemap: string): string;
}

const ADD_SITE: Change = {
  about: TOOLS.gsc_add_site,
  sitemap: false,
  run: (client, site, _sitemap, signal) => client.addSite(site, signal),
  message: () => 'property added',
};
const DELETE_SITE: Change = {
  about: TOOLS.gsc_delete_site,
  sitemap: false,
  run: (client, site, _sitemap, signal) => client.deleteSite(site, signal),
  message: () => 'property removed',
};
const SUBMIT_SITEMAP: Change = {
  about: TOOLS.gsc_submit_sitemap,
  sitemap: true,
  run: (client, site, sitemap, signal) => client.submitSitemap(site, sitemap, signal),
  message: (sitemap) => `sitemap submitted: ${sitemap}`,
};
const DELETE_SITEMAP: Change = {
  about: TOOLS.gsc_delete_sitemap,
  sitemap: true,
  run: (client, site, sitemap, signal) => client.deleteSitemap(site, sitemap, signal),
  message: (sitemap) => `sitemap deleted: ${sitemap}`,
};

/** Every change is gated: a destructive one by GSC_ALLOW_DESTRUCTIVE, the others by GSC_ALLOW_WRITE. */
function changeTool(deps: GscToolDeps, change: Change): ToolDefinition {
  return siteTool(deps, change.about, {
    input: change.sitemap ? { sitemap_url: sitemapUrl } : {},
    output: statusResult,
    async run(args, site, signal) {
      const sitemap = (args as { sitemap_url?: string }).sitemap_url ?? '';
      gate(deps.settings, change.about.annotations.destructiveHint ? 'delete' : 'write', change.about.name);
      await change.run(deps.client, site, sitemap, signal);
      return { status: 'ok' as const, site_url: site, message: change.message(sitemap) };
    },
  });
}
