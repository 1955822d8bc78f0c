/**
 * Single sign-on with any OpenID Connect provider (authorization code + PKCE, via
 * openid-client). The flow's state, nonce and PKCE verifier ride in a short-lived HttpOnly
 * cookie, so the callback may land on any gateway host. The provider's subject is the
 * account's identity; a verified email links an existing account once.
 */
import type * as Oidc from 'openid-client';
import type { Logger } from 'pino';
import { lazyRequire } from '../../shared/lazy-require.ts';
import type { AccountSecrets, StateStore } from '../accounts/model.ts';
import type { HttpResponse, RequestContext } from '../http/engine.ts';
import { html, page, redirect } from './html.ts';
import type { OidcSettings } from './oidc-settings.ts';
import { parseCookies, setCookie } from './session.ts';
import type { BeginSession, SsoFlow } from './sso.ts';

const loadOidc = lazyRequire<typeof Oidc>('openid-client');

const FLOW_COOKIE_SECONDS = 600;

function isLoopback(url: URL): boolean {
  return ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
}

interface FlowCookie {
  state: string;
  nonce: string;
  verifier: string;
}

function failure(message: string, status = 502): HttpResponse {
  return page(
    html`<h1>Single sign-on failed</h1><p class="error" role="alert">${message}</p><p><a href="/console/sign-in">Back to sign in</a></p>`,
    { title: 'Single sign-on failed', status },
  );
}

function readFlowCookie(raw: string | undefined): FlowCookie | undefined {
  try {
    const flow = JSON.parse(Buffer.from(raw ?? '', 'base64url').toString('utf8'));
    return typeof flow.state === 'string' && typeof flow.verifier === 'string' ? flow : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A page, not a redirect: a navigation that began at the provider would not carry the new
 * SameSite=Strict cookie; one that begins here does.
 */
function signedInPage(session: HttpResponse): HttpResponse {
  const cookie = session.headers?.['set-cookie'];
  return page(
    html`<h1>Signed in</h1><p><a href="/console">Continue to the console</a></p><meta http-equiv="refresh" content="0;url=/console">`,
    { title: 'Signed in', headers: cookie ? { 'set-cookie': cookie } : {} },
  );
}

export interface OidcFlowOptions {
  settings: OidcSettings;
  store: StateStore;
  log: Logger;
  secure: boolean;
  baseUrl(host: string | undefined): string;
}

class OidcFlow implements SsoFlow {
  readonly displayName: string;
  private readonly cookieName: string;
  private readonly issuerUrl: URL;
  private configuration: Promise<Oidc.Configuration> | undefined;

  constructor(private readonly options: OidcFlowOptions) {
    this.displayName = options.settings.displayName;
    this.cookieName = options.secure ? '__Host-mcp_console_sso' : 'mcp_console_sso';
    this.issuerUrl = new URL(options.settings.issuer);
  }

  async handle(context: RequestContext, beginSession: BeginSession): Promise<HttpResponse> {
    if (context.head.path === '/console/sso/start') return this.start(context);
    if (context.head.path === '/console/sso/callback') return this.callback(context, beginSession);
    return page(html`<h1>Not found</h1>`, { title: 'Not found', status: 404 });
  }

  /** Discovered on first use, so a provider that is down does not stop the gateway; retried after a failure. */
  private config(): Promise<Oidc.Configuration> {
    const { clientId, clientSecret } = this.options.settings;
    this.configuration ??= loadOidc()
      .discovery(
        this.issuerUrl,
        clientId,
        clientSecret,
        undefined,
        // Plain HTTP only for a provider on this machine (development, tests).
        isLoopback(this.issuerUrl) ? { execute: [loadOidc().allowInsecureRequests] } : undefined,
      )
      .catch((error: unknown) => {
        this.configuration = undefined;
        throw error;
      });
    return this.configuration;
  }

  private async start(context: RequestContext): Promise<HttpResponse> {
    let discovered: Oidc.Configuration;
    try {
      discovered = await this.config();
    } catch (error) {
      this.options.log.warn({ err: error, issuer: this.options.settings.issuer }, 'OIDC discovery failed');
      return failure('The sign-on provider could not be reached. Try again, or sign in with a password.');
    }
    const verifier = loadOidc().randomPKCECodeVerifier();
    const flow: FlowCookie = { state: loadOidc().randomState(), nonce: loadOidc().randomNonce(), verifier };
    const url = loadOidc().buildAuthorizationUrl(discovered, {
      redirect_uri: `${this.options.baseUrl(context.head.headers.host)}/console/sso/callback`,
      scope: 'openid email',
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: await loadOidc().calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const value = Buffer.from(JSON.stringify(flow)).toString('base64url');
    const cookie = setCookie(this.cookieName, value, this.options.secure, FLOW_COOKIE_SECONDS)
      // The provider sends the browser back cross-site: a Strict cookie would stay behind.
      .replace('SameSite=Strict', 'SameSite=Lax');
    return redirect(url.href, { 'set-cookie': cookie });
  }

  private async callback(context: RequestContext, beginSession: BeginSession): Promise<HttpResponse> {
    const flow = readFlowCookie(parseCookies(context.head.headers.cookie).get(this.cookieName));
    if (!flow) {
      return failure(
        'The sign-on attempt expired or did not start here. Start again from the sign-in page.',
        400,
      );
    }
    let claims: Record<string, unknown> | undefined;
    try {
      claims = await this.claims(context, flow);
    } catch (error) {
      const err = error instanceof Error ? error.message : String(error);
      this.options.log.warn({ err }, 'OIDC callback refused');
      return failure(
        'The sign-on provider did not confirm this sign-in. Start again from the sign-in page.',
        400,
      );
    }
    if (typeof claims?.sub !== 'string') return failure('The sign-on provider sent no subject.', 400);
    const account = await this.account(claims.sub, claims);
    if (typeof account === 'string') return failure(account, 403);
    return signedInPage(await beginSession(context, account.id, account.email));
  }

  /** The provider's claims about who signed in, once it confirms the code this flow began. */
  private async claims(
    context: RequestContext,
    flow: FlowCookie,
  ): Promise<Record<string, unknown> | undefined> {
    const base = this.options.baseUrl(context.head.headers.host);
    const tokens = await loadOidc().authorizationCodeGrant(
      await this.config(),
      new URL(`${base}/console/sso/callback?${context.head.query}`),
      {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      },
    );
    const idToken = tokens.claims();
    // Many providers keep email out of the ID token and serve it from userinfo.
    if (idToken && idToken.email === undefined && tokens.access_token) {
      const info = await loadOidc().fetchUserInfo(await this.config(), tokens.access_token, idToken.sub);
      return { ...info, sub: idToken.sub };
    }
    return idToken;
  }

  /**
   * The account this subject signs in to: the one it is linked to, else the one with its
   * verified email (linked now), else a new one. A string says why there is none.
   */
  private async account(sub: string, claims: Record<string, unknown>): Promise<AccountSecrets | string> {
    const { store, settings } = this.options;
    const subject = `${settings.issuer}|${sub}`;
    const email = typeof claims.email === 'string' ? claims.email : undefined;
    const verified = claims.email_verified === true;
    let account = await store.accountByOidcSubject(subject);
    if (!account && email && verified) {
      account = await store.accountByEmail(email);
      if (account) await store.linkOidcSubject(account.id, subject);
    }
    if (!account) {
      if (!email || !verified)
        return 'The sign-on provider did not share a verified email address for this account.';
      await store.createAccount({ email, passwordHash: null, admin: false, oidcSubject: subject });
      account = await store.accountByOidcSubject(subject);
    }
    if (!account || account.disabledAt) return 'This account is disabled. Ask an administrator.';
    return account;
  }
}

export function createOidcFlow(options: OidcFlowOptions): SsoFlow {
  return new OidcFlow(options);
}

export { type OidcSettings, oidcSettings } from './oidc-settings.ts';
