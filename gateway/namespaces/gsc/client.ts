/** Search Console API calls. Path parameters are percent-encoded (`sc-domain:` and URL prefixes). */
import type { Logger } from 'pino';
import { UpstreamError } from '../../upstream/errors.ts';
import { createUpstreamHttp, type ErrorDescription, type UpstreamHttp } from '../../upstream/http.ts';
import { GoogleTokenProvider } from './credentials.ts';
import type { GscSettings } from './settings.ts';

export interface ApiRow {
  keys?: string[];
  clicks: number;
  impressions: number;
  ctr: number;
  position: number;
}

export interface QueryResponse {
  rows?: ApiRow[];
  responseAggregationType?: string;
  metadata?: { firstIncompleteDate?: string; firstIncompleteHour?: string };
}

export interface Filter {
  dimension: string;
  operator: string;
  expression: string;
}

export interface QueryBody {
  startDate: string;
  endDate: string;
  dimensions?: string[];
  type?: string;
  dimensionFilterGroups?: Array<{ groupType: 'and'; filters: Filter[] }>;
  aggregationType?: string;
  rowLimit?: number;
  startRow?: number;
  dataState?: string;
}

const QUOTA_REASONS = new Set(['quotaExceeded', 'dailyLimitExceeded', 'dailyLimitExceededUnreg']);
const RATE_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded']);

/** Google's error body: `{error: {code, message, status, errors: [{reason, message}]}}`. */
function describeGoogleError(status: number, body: string, clientEmail: string | null): ErrorDescription {
  let parsed: { error?: { message?: string; status?: string; errors?: Array<{ reason?: string }> } } = {};
  try {
    parsed = JSON.parse(body);
  } catch {}
  const reasons = (parsed.error?.errors ?? []).map((e) => e.reason ?? '');
  const detail = parsed.error?.message?.slice(0, 300);
  const base = detail ? { detail } : {};
  if (reasons.some((r) => QUOTA_REASONS.has(r))) return { ...base, code: 'QUOTA_EXCEEDED' };
  if (reasons.some((r) => RATE_REASONS.has(r))) return { ...base, code: 'RATE_LIMITED' };
  if (status === 403) {
    const who = clientEmail ? `the service account ${clientEmail}` : 'the signed-in user';
    if (/scope/i.test(detail ?? '') || reasons.includes('insufficientPermissions')) {
      return {
        ...base,
        code: 'PERMISSION_DENIED',
        advice:
          'The token lacks the write scope: set GSC_ALLOW_WRITE=true (or GSC_ALLOW_DESTRUCTIVE=true for deletes) and restart.',
      };
    }
    return {
      ...base,
      code: 'PERMISSION_DENIED',
      advice: `Add ${who} as a user of the property (Search Console → Settings → Users and permissions), or use gsc_list_properties to see what it can access.`,
    };
  }
  if (status === 401) {
    return {
      ...base,
      advice: 'Google rejected the access token: check the credentials setting and restart.',
    };
  }
  return base;
}

export class GscClient {
  readonly http: UpstreamHttp;
  readonly tokens: GoogleTokenProvider | null;

  constructor(
    private readonly settings: GscSettings,
    log: Logger,
    now: () => number = Date.now,
  ) {
    const clientEmail =
      settings.credentials?.type === 'service_account' ? settings.credentials.clientEmail : null;
    this.http = createUpstreamHttp({
      service: 'Google Search Console',
      log,
      timeoutMs: settings.timeoutMs,
      describeError: (status, body) => describeGoogleError(status, body, clientEmail),
    });
    this.tokens = settings.credentials
      ? new GoogleTokenProvider(
          this.http,
          settings.credentials,
          {
            tokenUrl: settings.tokenUrl,
            scope: settings.scope,
            timeoutMs: settings.timeoutMs,
            ...(settings.subject ? { subject: settings.subject } : {}),
          },
          now,
        )
      : null;
  }

  private async call<T>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    route: string,
    signal: AbortSignal,
    options: { json?: unknown; idempotent?: boolean } = {},
  ): Promise<T> {
    const tokens = this.tokens;
    if (!tokens) throw new UpstreamError('NOT_CONFIGURED', 'Google credentials are not loaded.');
    const response = await this.http.request({
      method,
      url: `${this.settings.apiBaseUrl}${path}`,
      route,
      signal,
      idempotent: options.idempotent ?? true,
      ...(options.json === undefined ? {} : { json: options.json }),
      authorize: (force) => tokens.header(force),
    });
    return (response.body.length ? response.json<T>() : {}) as T;
  }

  private site(siteUrl: string): string {
    return `/webmasters/v3/sites/${encodeURIComponent(siteUrl)}`;
  }

  listSites(signal: AbortSignal) {
    return this.call<{ siteEntry?: Array<{ siteUrl: string; permissionLevel: string }> }>(
      'GET',
      '/webmasters/v3/sites',
      'GET /webmasters/v3/sites',
      signal,
    );
  }

  getSite(siteUrl: string, signal: AbortSignal) {
    return this.call<{ siteUrl: string; permissionLevel: string }>(
      'GET',
      this.site(siteUrl),
      'GET /webmasters/v3/sites/{site}',
      signal,
    );
  }

  addSite(siteUrl: string, signal: AbortSignal) {
    return this.call<unknown>('PUT', this.site(siteUrl), 'PUT /webmasters/v3/sites/{site}', signal);
  }

  deleteSite(siteUrl: string, signal: AbortSignal) {
    return this.call<unknown>('DELETE', this.site(siteUrl), 'DELETE /webmasters/v3/sites/{site}', signal);
  }

  /** searchAnalytics.query only reads, so retrying it is safe. */
  query(siteUrl: string, body: QueryBody, signal: AbortSignal) {
    return this.call<QueryResponse>(
      'POST',
      `${this.site(siteUrl)}/searchAnalytics/query`,
      'POST /webmasters/v3/sites/{site}/searchAnalytics/query',
      signal,
      { json: body },
    );
  }

  listSitemaps(siteUrl: string, sitemapIndex: string | undefined, signal: AbortSignal) {
    const query = sitemapIndex ? `?sitemapIndex=${encodeURIComponent(sitemapIndex)}` : '';
    return this.call<{ sitemap?: Array<Record<string, unknown>> }>(
      'GET',
      `${this.site(siteUrl)}/sitemaps${query}`,
      'GET /webmasters/v3/sites/{site}/sitemaps',
      signal,
    );
  }

  /** One sitemap (a "feed") of a property: read, submitted and deleted at the same path. */
  private feed<T>(method: 'GET' | 'PUT' | 'DELETE', siteUrl: string, feedpath: string, signal: AbortSignal) {
    const path = `${this.site(siteUrl)}/sitemaps/${encodeURIComponent(feedpath)}`;
    return this.call<T>(method, path, `${method} /webmasters/v3/sites/{site}/sitemaps/{feed}`, signal);
  }

  getSitemap(siteUrl: string, feedpath: string, signal: AbortSignal) {
    return this.feed<Record<string, unknown>>('GET', siteUrl, feedpath, signal);
  }

  submitSitemap(siteUrl: string, feedpath: string, signal: AbortSignal) {
    return this.feed<unknown>('PUT', siteUrl, feedpath, signal);
  }

  deleteSitemap(siteUrl: string, feedpath: string, signal: AbortSignal) {
    return this.feed<unknown>('DELETE', siteUrl, feedpath, signal);
  }

  inspect(siteUrl: string, inspectionUrl: string, languageCode: string | undefined, signal: AbortSignal) {
    return this.call<{ inspectionResult?: Record<string, unknown> }>(
      'POST',
      '/v1/urlInspection/index:inspect',
      'POST /v1/urlInspection/index:inspect',
      signal,
      { json: { inspectionUrl, siteUrl, ...(languageCode ? { languageCode } : {}) } },
    );
  }
}
