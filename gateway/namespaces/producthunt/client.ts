import type { Logger } from 'pino';
import { UpstreamError } from '../../upstream/errors.ts';
import { createUpstreamHttp, type UpstreamHttp } from '../../upstream/http.ts';
import { redactText, registerSecret } from '../../upstream/redact.ts';
import type { ProductHuntSettings } from './settings.ts';

export interface RateLimit {
  limit: number | null;
  remaining: number | null;
  reset_in_s: number | null;
}

export interface GraphQLErrorItem {
  message: string;
  path?: Array<string | number>;
}

export interface GraphQLResult<T> {
  data: T;
  errors: GraphQLErrorItem[];
  rateLimit: RateLimit | null;
}

/** Header names differ between Product Hunt's docs and third-party write-ups; accept both. */
function header(headers: Headers, name: string): number | null {
  const raw = headers.get(`x-rate-limit-${name}`) ?? headers.get(`x-ratelimit-${name}`);
  if (raw === null || raw.trim() === '') return null;
  const value = Number(raw);
  return Number.isFinite(value) ? value : null;
}

/**
 * Product Hunt's GraphQL API: constant documents with variables, a bearer token (developer
 * token, or a client-credentials token fetched lazily and refreshed after a 401), and the
 * rate-limit budget read from every answer so a spent budget is refused before calling.
 */
export class ProductHuntClient {
  private readonly http: UpstreamHttp;
  private cachedToken: { value: string; expiresAt: number } | null = null;
  private tokenInFlight: Promise<string> | null = null;
  /** Last known budget; `resetAt` is an absolute time (ms). */
  private budget: { limit: number | null; remaining: number | null; resetAt: number | null } | null = null;
  tokenRequests = 0;

  constructor(
    private readonly settings: ProductHuntSettings,
    log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.http = createUpstreamHttp({
      service: 'Product Hunt',
      log,
      timeoutMs: settings.timeoutMs,
      describeError: (status, body, headers) => {
        this.noteBudget(headers);
        if (status === 429) {
          const reset = header(headers, 'reset');
          return {
            code: 'RATE_LIMITED',
            note: 'the application used its complexity budget for this 15-minute window',
            retry: false,
            ...(reset === null ? {} : { retryAfterS: reset }),
          };
        }
        if (status === 401 || status === 403) {
          return {
            detail: body.slice(0, 200),
            advice: `Product Hunt refused the credentials: check ${this.authSettingNames()} and restart the gateway.`,
          };
        }
        return {};
      },
    });
  }

  private authSettingNames(): string {
    return this.settings.auth?.kind === 'client_credentials'
      ? 'PRODUCTHUNT_CLIENT_ID / PRODUCTHUNT_CLIENT_SECRET'
      : 'PRODUCTHUNT_TOKEN';
  }

  private noteBudget(headers: Headers): void {
    const limit = header(headers, 'limit');
    const remaining = header(headers, 'remaining');
    const reset = header(headers, 'reset');
    if (limit === null && remaining === null && reset === null) return;
    // Documented as seconds until reset; a value that looks like a Unix time is taken as one.
    const resetAt = reset === null ? null : reset > 1e9 ? reset * 1000 : this.now() + reset * 1000;
    this.budget = { limit, remaining, resetAt };
  }

  rateLimit(): RateLimit | null {
    if (!this.budget) return null;
    const { limit, remaining, resetAt } = this.budget;
    return {
      limit,
      remaining,
      reset_in_s: resetAt === null ? null : Math.max(0, Math.ceil((resetAt - this.now()) / 1000)),
    };
  }

  private async authorization(force: boolean): Promise<string> {
    const auth = this.settings.auth;
    if (!auth) throw new UpstreamError('NOT_CONFIGURED', 'Product Hunt credentials are not set.');
    if (auth.kind === 'token') return `Bearer ${auth.token}`;
    if (force) this.cachedToken = null;
    if (this.cachedToken && this.cachedToken.expiresAt > this.now())
      return `Bearer ${this.cachedToken.value}`;
    // One token request at a time: concurrent calls share it.
    // Not tied to one caller's signal: a caller going away must not fail the others waiting.
    this.tokenInFlight ??= this.fetchToken(auth.clientId, auth.clientSecret).finally(() => {
      this.tokenInFlight = null;
    });
    return `Bearer ${await this.tokenInFlight}`;
  }

  private async fetchToken(clientId: string, clientSecret: string): Promise<string> {
    this.tokenRequests++;
    const response = await this.http.request({
      method: 'POST',
      url: this.settings.tokenUrl,
      route: 'POST /v2/oauth/token',
      signal: AbortSignal.timeout(this.settings.timeoutMs),
      idempotent: true,
      json: { client_id: clientId, client_secret: clientSecret, grant_type: 'client_credentials' },
    });
    const body = response.json<{ access_token?: unknown; expires_in?: unknown }>();
    if (typeof body.access_token !== 'string' || body.access_token === '') {
      throw new UpstreamError('UPSTREAM_ERROR', 'Product Hunt issued no access token; try again later.');
    }
    registerSecret(body.access_token);
    const ttlS = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600;
    this.cachedToken = { value: body.access_token, expiresAt: this.now() + Math.max(0, ttlS - 60) * 1000 };
    return body.access_token;
  }

  /** Runs one constant query document. Partial data comes back with its errors. */
  async query<T>(
    document: string,
    variables: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<GraphQLResult<T>> {
    const known = this.rateLimit();
    if (known && known.remaining !== null && known.remaining <= 0 && (known.reset_in_s ?? 0) > 0) {
      throw new UpstreamError(
        'RATE_LIMITED',
        `Product Hunt's rate budget for this window is spent (limit ${known.limit ?? 'unknown'}); it resets in ${known.reset_in_s} s. Call again after that.`,
        { retryAfterS: known.reset_in_s ?? undefined },
      );
    }
    const response = await this.http.request({
      method: 'POST',
      url: this.settings.apiUrl,
      route: 'POST /v2/api/graphql',
      signal,
      // Queries only (the raw tool refuses mutations), so a repeat is harmless.
      idempotent: true,
      json: { query: document, variables },
      authorize: (force) => this.authorization(force),
    });
    this.noteBudget(response.headers);
    const body = response.json<{ data?: T | null; errors?: GraphQLErrorItem[] }>();
    // Partial errors go into a successful result, where UpstreamError's redaction never runs,
    // and an upstream may echo the credential it was sent.
    const errors = Array.isArray(body.errors)
      ? body.errors.map((e) => ({
          message: redactText(String(e.message)),
          ...(e.path ? { path: e.path } : {}),
        }))
      : [];
    if (body.data === undefined || body.data === null) {
      const text = errors.map((e) => e.message).join('; ') || 'no data and no error';
      throw new UpstreamError(
        'INVALID_ARGUMENT',
        `Product Hunt refused the query: ${text.slice(0, 500)}. Check the arguments (ids, slugs, enum values).`,
      );
    }
    return { data: body.data, errors, rateLimit: this.rateLimit() };
  }
}
