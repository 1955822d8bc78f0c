/**
 * A loopback Google: an OAuth token endpoint that verifies RS256 JWT-bearer assertions (and
 * refresh tokens), and the Search Console routes the gsc namespace uses, answering from a
 * fixture fact table that it really groups, filters, sorts and pages.
 */
import { type createPublicKey, generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { addDays, pacificDate } from '../../../gateway/upstream/pacific.ts';
import { BIG_SITE, buildFacts, type Fact, P, PREFIX_SITE, SITE } from './google-facts.ts';
import { type LoopbackServer, sendJson, startLoopback } from './loopback.ts';

export { BIG_SITE, P, PREFIX_SITE, SITE } from './google-facts.ts';

export const READONLY = 'https://www.googleapis.com/auth/webmasters.readonly';
export const FULL = 'https://www.googleapis.com/auth/webmasters';

function googleError(
  res: Parameters<typeof sendJson>[0],
  code: number,
  message: string,
  reason: string,
  status: string,
) {
  sendJson(res, code, { error: { code, message, status, errors: [{ message, domain: 'global', reason }] } });
}

const OPERATORS = ['equals', 'contains', 'notEquals', 'notContains', 'includingRegex', 'excludingRegex'];
const DIMENSIONS = ['query', 'page', 'country', 'device', 'searchAppearance', 'date', 'hour'];

function matches(fact: Fact, f: { dimension: string; operator: string; expression: string }): boolean {
  const value = String((fact as unknown as Record<string, unknown>)[f.dimension] ?? '');
  switch (f.operator) {
    case 'equals':
      return value === f.expression;
    case 'notEquals':
      return value !== f.expression;
    case 'contains':
      return value.toLowerCase().includes(f.expression.toLowerCase());
    case 'notContains':
      return !value.toLowerCase().includes(f.expression.toLowerCase());
    case 'includingRegex':
      return new RegExp(f.expression).test(value);
    default:
      return !new RegExp(f.expression).test(value);
  }
}

export interface GoogleContract extends LoopbackServer {
  tokenUrl: string;
  serviceAccount(email: string): Record<string, string>;
  authorizedUser(): Record<string, string>;
  /** Scopes and subjects of issued tokens, in order. */
  grants: Array<{ scope: string; sub?: string; grant: string }>;
  tokens: Map<string, { scope: string }>;
  queries: Array<Record<string, unknown>>;
  inspections: { inFlight: number; maxInFlight: number };
  sitemaps: Map<string, Array<Record<string, unknown>>>;
  sites: Map<string, string>;
  today: string;
}

export async function startGoogleContract(): Promise<GoogleContract> {
  const keys = new Map<string, ReturnType<typeof createPublicKey>>();
  const refresh = {
    client_id: `cid-${randomBytes(6).toString('hex')}`,
    client_secret: `csec-${randomBytes(12).toString('hex')}`,
    refresh_token: `1//rt-${randomBytes(16).toString('hex')}`,
  };
  const tokens = new Map<string, { scope: string }>();
  const grants: GoogleContract['grants'] = [];
  const queries: Array<Record<string, unknown>> = [];
  const inspections = { inFlight: 0, maxInFlight: 0 };
  const today = pacificDate(Date.now());
  const facts = buildFacts(today);
  const sites = new Map([
    [SITE, 'siteOwner'],
    [PREFIX_SITE, 'siteFullUser'],
    [BIG_SITE, 'siteOwner'],
    ['sc-domain:other.example', 'siteUnverifiedUser'],
  ]);
  const sitemap = (path: string, index = false) => ({
    path,
    lastSubmitted: '2026-01-01T00:00:00Z',
    isPending: false,
    isSitemapsIndex: index,
    type: index ? 'sitemap' : 'urlList',
    lastDownloaded: '2026-01-02T00:00:00Z',
    warnings: '3',
    errors: '0',
    contents: [{ type: 'web', submitted: '120', indexed: '100' }],
  });
  const sitemaps = new Map([[SITE, [sitemap(P('/sitemap.xml')), sitemap(P('/sitemap_index.xml'), true)]]]);

  let self: GoogleContract;
  const server = (await startLoopback(async (req, res) => {
    const url = new URL(req.path, 'http://x');
    if (req.method === 'POST' && url.pathname === '/token') {
      if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
        return sendJson(res, 400, { error: 'invalid_request', error_description: 'form body required' });
      }
      const form = new URLSearchParams(req.body);
      let scope: string;
      let sub: string | undefined;
      if (form.get('grant_type') === 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
        const [h, c, s] = String(form.get('assertion')).split('.');
        const header = JSON.parse(Buffer.from(h ?? '', 'base64url').toString());
        const claims = JSON.parse(Buffer.from(c ?? '', 'base64url').toString());
        const key = keys.get(claims.iss);
        const nowS = Math.floor(Date.now() / 1000);
        const ok =
          header.alg === 'RS256' &&
          key !== undefined &&
          verify('RSA-SHA256', Buffer.from(`${h}.${c}`), key, Buffer.from(s ?? '', 'base64url')) &&
          claims.aud === self.tokenUrl &&
          claims.exp - claims.iat <= 3600 &&
          claims.exp > nowS &&
          claims.iat <= nowS + 60 &&
          [READONLY, FULL].includes(claims.scope);
        if (!ok)
          return sendJson(res, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
        scope = claims.scope;
        sub = claims.sub;
      } else if (form.get('grant_type') === 'refresh_token') {
        if (
          form.get('client_id') !== refresh.client_id ||
          form.get('client_secret') !== refresh.client_secret
        ) {
          return sendJson(res, 401, { error: 'invalid_client' });
        }
        if (form.get('refresh_token') !== refresh.refresh_token)
          return sendJson(res, 400, { error: 'invalid_grant' });
        scope = READONLY;
      } else return sendJson(res, 400, { error: 'unsupported_grant_type' });
      const token = `ya29.${randomBytes(18).toString('hex')}`;
      tokens.set(token, { scope });
      grants.push({ scope, grant: String(form.get('grant_type')), ...(sub ? { sub } : {}) });
      return sendJson(res, 200, { access_token: token, expires_in: 3599, token_type: 'Bearer' });
    }

    const bearer = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    const grant = tokens.get(bearer);
    if (!grant)
      return googleError(
        res,
        401,
        'Request had invalid authentication credentials.',
        'authError',
        'UNAUTHENTICATED',
      );
    if (['PUT', 'DELETE'].includes(req.method) && grant.scope !== FULL) {
      return googleError(
        res,
        403,
        'Request had insufficient authentication scopes.',
        'insufficientPermissions',
        'PERMISSION_DENIED',
      );
    }
    // Path parameters must arrive percent-encoded: one segment each.
    const parts = url.pathname.split('/').filter(Boolean);
    if (url.pathname === '/v1/urlInspection/index:inspect' && req.method === 'POST') {
      const body = JSON.parse(req.body);
      inspections.inFlight++;
      inspections.maxInFlight = Math.max(inspections.maxInFlight, inspections.inFlight);
      await new Promise((r) => setTimeout(r, 15));
      inspections.inFlight--;
      if (!sites.has(body.siteUrl))
        return googleError(res, 403, 'You do not own this site.', 'forbidden', 'PERMISSION_DENIED');
      const target = String(body.inspectionUrl);
      if (!target.startsWith('https://example.com/')) {
        return googleError(
          res,
          400,
          `URL '${target}' is not in property '${body.siteUrl}'.`,
          'badRequest',
          'INVALID_ARGUMENT',
        );
      }
      const path = target.slice('https://example.com'.length);
      const blocked = path.startsWith('/blocked');
      return sendJson(res, 200, {
        inspectionResult: {
          inspectionResultLink: `https://search.google.com/search-console/inspect?resource_id=x&id=${encodeURIComponent(target)}`,
          indexStatusResult: {
            verdict: blocked ? 'FAIL' : 'PASS',
            coverageState: blocked ? 'Blocked by robots.txt' : 'Submitted and indexed',
            robotsTxtState: blocked ? 'DISALLOWED' : 'ALLOWED',
            indexingState: 'INDEXING_ALLOWED',
            lastCrawlTime: '2026-01-05T10:00:00Z',
            pageFetchState: blocked ? 'BLOCKED_ROBOTS_TXT' : 'SUCCESSFUL',
            googleCanonical: path.startsWith('/dup') ? P('/canonical') : target,
            userCanonical: target,
            sitemap: [P('/sitemap.xml')],
            referringUrls: [],
            crawledAs: 'MOBILE',
          },
          richResultsResult: {
            verdict: 'PASS',
            detectedItems: [
              {
                richResultType: 'Breadcrumbs',
                items: [
                  {
                    name: 'Unnamed item',
                    issues: [{ issueMessage: 'Missing field "item"', severity: 'WARNING' }],
                  },
                ],
              },
            ],
          },
          ...(body.languageCode ? { languageCode: body.languageCode } : {}),
        },
      });
    }
    if (parts[0] !== 'webmasters' || parts[1] !== 'v3' || parts[2] !== 'sites') {
      return googleError(res, 404, 'Not Found', 'notFound', 'NOT_FOUND');
    }
    if (parts.length === 3 && req.method === 'GET') {
      return sendJson(res, 200, {
        siteEntry: [...sites].map(([siteUrl, permissionLevel]) => ({ siteUrl, permissionLevel })),
      });
    }
    const site = decodeURIComponent(parts[3] ?? '');
    if (parts.length === 4) {
      if (req.method === 'PUT') {
        sites.set(site, 'siteUnverifiedUser');
        return sendJson(res, 200, {});
      }
      if (!sites.has(site))
        return googleError(
          res,
          403,
          `User does not have sufficient permission for site '${site}'.`,
          'forbidden',
          'PERMISSION_DENIED',
        );
      if (req.method === 'DELETE') {
        sites.delete(site);
        res.writeHead(204).end();
        return;
      }
      return sendJson(res, 200, { siteUrl: site, permissionLevel: sites.get(site) });
    }
    if (!sites.has(site))
      return googleError(
        res,
        403,
        `User does not have sufficient permission for site '${site}'.`,
        'forbidden',
        'PERMISSION_DENIED',
      );
    if (parts[4] === 'sitemaps') {
      const list = sitemaps.get(site) ?? [];
      if (parts.length === 5)
        return sendJson(
          res,
          200,
          url.searchParams.get('sitemapIndex') ? { sitemap: [list[0]] } : { sitemap: list },
        );
      if (parts.length !== 6) return googleError(res, 404, 'Not Found', 'notFound', 'NOT_FOUND');
      const feed = decodeURIComponent(parts[5] ?? '');
      const found = list.find((s) => s.path === feed);
      if (req.method === 'PUT') {
        if (!found) list.push(sitemap(feed));
        sitemaps.set(site, list);
        return sendJson(res, 200, {});
      }
      if (!found) return googleError(res, 404, 'Sitemap not found.', 'notFound', 'NOT_FOUND');
      if (req.method === 'DELETE') {
        sitemaps.set(
          site,
          list.filter((s) => s !== found),
        );
        res.writeHead(204).end();
        return;
      }
      return sendJson(res, 200, found);
    }
    if (parts[4] === 'searchAnalytics' && parts[5] === 'query' && req.method === 'POST') {
      const body = JSON.parse(req.body);
      queries.push(body);
      const bad = (message: string) => googleError(res, 400, message, 'badRequest', 'INVALID_ARGUMENT');
      const dateOk = (d: unknown) => typeof d === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(d);
      if (!dateOk(body.startDate) || !dateOk(body.endDate))
        return bad('startDate and endDate are required (YYYY-MM-DD).');
      const rowLimit = body.rowLimit ?? 1000;
      if (!Number.isInteger(rowLimit) || rowLimit < 1 || rowLimit > 25000)
        return bad('rowLimit must be between 1 and 25000.');
      const startRow = body.startRow ?? 0;
      if (!Number.isInteger(startRow) || startRow < 0) return bad('startRow must be non-negative.');
      const dims: string[] = body.dimensions ?? [];
      if (dims.some((d) => !DIMENSIONS.includes(d))) return bad('Invalid dimension.');
      const state = body.dataState ?? 'final';
      if (!['all', 'final', 'hourly_all'].includes(state)) return bad('Invalid dataState.');
      if (dims.includes('hour') && state !== 'hourly_all')
        return bad('The HOUR dimension requires dataState HOURLY_ALL.');
      const filters = (body.dimensionFilterGroups ?? []).flatMap(
        (g: { filters: unknown[] }) => g.filters,
      ) as Array<{ dimension: string; operator: string; expression: string }>;
      if (filters.some((f) => !OPERATORS.includes(f.operator) || !DIMENSIONS.includes(f.dimension)))
        return bad('Invalid filter.');
      const lastFinal = addDays(today, -2);
      const endDate = state === 'final' && body.endDate > lastFinal ? lastFinal : body.endDate;
      const groups = new Map<
        string,
        { keys: string[]; clicks: number; impressions: number; positionSum: number }
      >();
      for (const fact of facts.get(site) ?? []) {
        if (fact.date < body.startDate || fact.date > endDate) continue;
        if (!filters.every((f) => matches(fact, f))) continue;
        const keys = dims.map((d) =>
          d === 'hour'
            ? `${fact.date}T05:00:00-08:00`
            : String((fact as unknown as Record<string, unknown>)[d]),
        );
        const id = JSON.stringify(keys);
        const g = groups.get(id) ?? { keys, clicks: 0, impressions: 0, positionSum: 0 };
        g.clicks += fact.clicks;
        g.impressions += fact.impressions;
        g.positionSum += fact.position * fact.impressions;
        groups.set(id, g);
      }
      const rows = [...groups.values()]
        .sort((a, b) => b.clicks - a.clicks || a.keys.join().localeCompare(b.keys.join()))
        .slice(startRow, startRow + rowLimit)
        .map((g) => ({
          ...(dims.length ? { keys: g.keys } : {}),
          clicks: g.clicks,
          impressions: g.impressions,
          ctr: g.impressions ? g.clicks / g.impressions : 0,
          position: g.impressions ? g.positionSum / g.impressions : 0,
        }));
      return sendJson(res, 200, {
        ...(rows.length ? { rows } : {}),
        responseAggregationType: dims.includes('page') ? 'byPage' : 'byProperty',
        ...(state !== 'final'
          ? {
              metadata: {
                firstIncompleteDate: addDays(today, -1),
                ...(state === 'hourly_all' ? { firstIncompleteHour: `${today}T03:00:00-08:00` } : {}),
              },
            }
          : {}),
      });
    }
    return googleError(res, 404, 'Not Found', 'notFound', 'NOT_FOUND');
  })) as GoogleContract;
  self = server;
  server.tokenUrl = `${server.url}/token`;
  server.grants = grants;
  server.tokens = tokens;
  server.queries = queries;
  server.inspections = inspections;
  server.sitemaps = sitemaps;
  server.sites = sites;
  server.today = today;
  server.serviceAccount = (email) => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    keys.set(email, publicKey);
    return {
      type: 'service_account',
      project_id: 'test-project',
      private_key_id: randomBytes(20).toString('hex'),
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      client_email: email,
      client_id: '1234567890',
      token_uri: server.tokenUrl,
    };
  };
  server.authorizedUser = () => ({ type: 'authorized_user', ...refresh });
  return server;
}
