/**
 * Google credentials without a Google library: a service-account key signs an RS256 JWT and
 * trades it at the token URL (OAuth 2.0 JWT-bearer grant); an authorized-user file trades its
 * refresh token. Tokens are cached until a minute before expiry, one refresh runs at a time,
 * and a 401 from the API forces one fresh token.
 */
import { createPrivateKey, createSign, type KeyObject } from 'node:crypto';
import { UpstreamError } from '../../upstream/errors.ts';
import type { UpstreamHttp } from '../../upstream/http.ts';
import { registerSecret } from '../../upstream/redact.ts';

export const SCOPE_READONLY = 'https://www.googleapis.com/auth/webmasters.readonly';
export const SCOPE_FULL = 'https://www.googleapis.com/auth/webmasters';

export type GoogleCredentials =
  | {
      type: 'service_account';
      clientEmail: string;
      keyId: string | null;
      privateKey: KeyObject;
      tokenUri: string | null;
    }
  | { type: 'authorized_user'; clientId: string; clientSecret: string; refreshToken: string };

/** Parses a credentials JSON document; throws an Error whose message names what is wrong (never the key). */
export function parseCredentials(text: string): GoogleCredentials {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error('is not valid JSON');
  }
  if (typeof raw !== 'object' || raw === null) throw new Error('is not a JSON object');
  const str = (key: string) =>
    typeof raw[key] === 'string' && raw[key] !== '' ? (raw[key] as string) : null;
  if (raw.type === 'service_account') {
    const clientEmail = str('client_email');
    const pem = str('private_key');
    if (!clientEmail) throw new Error('service_account JSON lacks client_email');
    if (!pem) throw new Error('service_account JSON lacks private_key');
    registerSecret(pem);
    let privateKey: KeyObject;
    try {
      privateKey = createPrivateKey(pem);
    } catch {
      throw new Error('service_account private_key is not a readable PEM private key');
    }
    if (privateKey.asymmetricKeyType !== 'rsa')
      throw new Error('service_account private_key is not an RSA key');
    const keyId = str('private_key_id');
    registerSecret(keyId);
    return { type: 'service_account', clientEmail, keyId, privateKey, tokenUri: str('token_uri') };
  }
  if (raw.type === 'authorized_user') {
    const clientId = str('client_id');
    const clientSecret = str('client_secret');
    const refreshToken = str('refresh_token');
    const missing = [
      !clientId && 'client_id',
      !clientSecret && 'client_secret',
      !refreshToken && 'refresh_token',
    ].filter(Boolean);
    if (missing.length || !clientId || !clientSecret || !refreshToken) {
      throw new Error(`authorized_user JSON lacks ${missing.join(', ')}`);
    }
    registerSecret(clientSecret);
    registerSecret(refreshToken);
    return { type: 'authorized_user', clientId, clientSecret, refreshToken };
  }
  throw new Error(
    `has type ${JSON.stringify(raw.type ?? null)}; expected "service_account" or "authorized_user"`,
  );
}

const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

function signAssertion(
  credentials: Extract<GoogleCredentials, { type: 'service_account' }>,
  options: { scope: string; audience: string; subject?: string; nowS: number },
): string {
  const header = { alg: 'RS256', typ: 'JWT', ...(credentials.keyId ? { kid: credentials.keyId } : {}) };
  const claims = {
    iss: credentials.clientEmail,
    scope: options.scope,
    aud: options.audience,
    iat: options.nowS,
    exp: options.nowS + 3600,
    ...(options.subject ? { sub: options.subject } : {}),
  };
  const unsigned = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const signature = createSign('RSA-SHA256').update(unsigned).sign(credentials.privateKey);
  return `${unsigned}.${b64url(signature)}`;
}

export class GoogleTokenProvider {
  private cached: { token: string; expiresAt: number } | null = null;
  private inFlight: Promise<string> | null = null;
  /** Token requests made, for capabilities and tests. */
  requests = 0;

  constructor(
    private readonly http: UpstreamHttp,
    private readonly credentials: GoogleCredentials,
    private readonly options: { tokenUrl: string; scope: string; subject?: string; timeoutMs: number },
    private readonly now: () => number = Date.now,
  ) {}

  /** The Authorization header value; `force` discards the cached token (after a 401). */
  async header(force: boolean): Promise<string> {
    if (force) this.cached = null;
    if (this.cached && this.cached.expiresAt > this.now()) return `Bearer ${this.cached.token}`;
    this.inFlight ??= this.fetchToken().finally(() => {
      this.inFlight = null;
    });
    return `Bearer ${await this.inFlight}`;
  }

  private async fetchToken(): Promise<string> {
    this.requests++;
    const { credentials, options } = this;
    const form: Record<string, string> =
      credentials.type === 'service_account'
        ? {
            grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
            assertion: signAssertion(credentials, {
              scope: options.scope,
              audience: options.tokenUrl,
              nowS: Math.floor(this.now() / 1000),
              ...(options.subject ? { subject: options.subject } : {}),
            }),
          }
        : {
            grant_type: 'refresh_token',
            client_id: credentials.clientId,
            client_secret: credentials.clientSecret,
            refresh_token: credentials.refreshToken,
          };
    let body: { access_token?: unknown; expires_in?: unknown };
    try {
      const response = await this.http.request({
        method: 'POST',
        url: options.tokenUrl,
        route: 'POST /token',
        // Shared by every caller waiting on it, so no single caller's signal may end it.
        signal: AbortSignal.timeout(options.timeoutMs),
        idempotent: true,
        form,
      });
      body = response.json();
    } catch (error) {
      if (
        error instanceof UpstreamError &&
        (error.code === 'INVALID_ARGUMENT' || error.code === 'AUTH_REJECTED')
      ) {
        throw new UpstreamError(
          'AUTH_REJECTED',
          `Google refused the credentials at the token endpoint (${error.message}). Check the key or refresh token in GSC_CREDENTIALS_JSON / GSC_CREDENTIALS_PATH / GOOGLE_APPLICATION_CREDENTIALS${this.options.subject ? ' and that GSC_IMPERSONATE_SUBJECT is allowed by domain-wide delegation' : ''}, then restart the gateway.`,
        );
      }
      throw error;
    }
    if (typeof body.access_token !== 'string' || !body.access_token) {
      throw new UpstreamError('UPSTREAM_ERROR', 'Google issued no access token; try again later.');
    }
    registerSecret(body.access_token);
    const ttlS = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600;
    this.cached = { token: body.access_token, expiresAt: this.now() + Math.max(0, ttlS - 60) * 1000 };
    return body.access_token;
  }
}
