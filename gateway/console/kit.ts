/**
 * What every console page shares: the settings, the store, the cookies' names, and the few
 * responses more than one page gives (the keys page, a refusal, the start of a session).
 */
import type { Logger } from 'pino';
import type { StateStore } from '../accounts/model.ts';
import type { SignInService } from '../accounts/sign-in.ts';
import type { HttpResponse, RequestContext } from '../http/engine.ts';
import { html, page, redirect } from './html.ts';
import { createOidcFlow, type OidcSettings } from './oidc.ts';
import { type ConsoleView, consoleBody } from './pages.ts';
import {
  type ActiveSession,
  type CookieNames,
  cookieNames,
  hashToken,
  parseCookies,
  randomToken,
  setCookie,
  startSession,
} from './session.ts';
import type { SsoFlow } from './sso.ts';

export interface ConsoleOptions {
  store: StateStore;
  signIn: SignInService;
  namespaces: string[];
  log: Logger;
  publicBaseUrl?: string | undefined;
  fallbackBaseUrl: string;
  sessionTtlMs: number;
  selfRegistration: boolean;
  oidc?: OidcSettings | undefined;
}

export interface ConsoleKit {
  options: ConsoleOptions;
  store: StateStore;
  log: Logger;
  /** Cookies carry Secure (and the __Host- prefix) when the console is served over https. */
  secure: boolean;
  names: CookieNames;
  sso: SsoFlow | undefined;
  /** The URL clients reach this gateway at, for the client configuration shown with a new key. */
  baseUrl(host: string | undefined): string;
  /** The keys page, with the signed-in account's keys (and, for an admin, everyone's keys and accounts). */
  consolePage(
    active: ActiveSession,
    extra?: Partial<ConsoleView> & { status?: number },
  ): Promise<HttpResponse>;
  /** Ends whatever session the browser had, then issues a fresh token: the only way a session starts. */
  beginSession(context: RequestContext, accountId: string, email: string): Promise<HttpResponse>;
  /** Guards the sign-in and registration forms themselves (login CSRF); reused while the cookie lasts. */
  preSignInToken(context: RequestContext): { csrf: string; cookie: string };
}

const HOST_SHAPE = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/** The notices a redirect's ?done= names; anything else shows no notice. */
const DONE_MESSAGES: Record<string, string> = {
  revoked: 'Key revoked. Gateways stop admitting it within API_KEY_CACHE_TTL_MS.',
  'not-revoked': 'No such key among those you may revoke.',
  'account-added': 'Account added.',
  'account-disabled': 'Account disabled; its sessions ended and its keys stop working.',
  'account-enabled': 'Account enabled.',
  'signed-out': 'Signed out.',
};

export function doneNotice(query: string): { info?: string } {
  const message = DONE_MESSAGES[new URLSearchParams(query).get('done') ?? ''];
  return message ? { info: message } : {};
}

export function forbidden(message: string): HttpResponse {
  return page(
    html`<h1>Refused</h1><p class="error" role="alert">${message}</p><p><a href="/console">Back to the console</a></p>`,
    { title: 'Refused', status: 403 },
  );
}

export function createKit(options: ConsoleOptions): ConsoleKit {
  const { store, log } = options;
  const secure = options.publicBaseUrl?.startsWith('https://') ?? false;
  const names = cookieNames(secure);

  function baseUrl(host: string | undefined): string {
    if (options.publicBaseUrl) return options.publicBaseUrl.replace(/\/+$/, '');
    return host && HOST_SHAPE.test(host) ? `http://${host}` : options.fallbackBaseUrl;
  }

  async function consolePage(
    active: ActiveSession,
    extra: Partial<ConsoleView> & { status?: number } = {},
  ): Promise<HttpResponse> {
    const { account, session } = active;
    const view: ConsoleView = {
      account,
      csrf: session.csrfToken,
      namespaces: options.namespaces,
      ownKeys: await store.listKeys(account.id),
      ...(account.admin ? { allKeys: await store.listKeys(), accounts: await store.listAccounts() } : {}),
      ...extra,
    };
    return page(consoleBody(view), {
      title: 'API keys',
      status: extra.status ?? 200,
      signedInAs: { email: account.email, csrfToken: session.csrfToken },
    });
  }

  async function beginSession(context: RequestContext, accountId: string, email: string) {
    const previous = parseCookies(context.head.headers.cookie).get(names.session);
    if (previous) await store.deleteSession(hashToken(previous));
    const { token } = await startSession(store, accountId, options.sessionTtlMs);
    log.info({ accountId, email }, 'console sign-in');
    return redirect('/console', {
      'set-cookie': setCookie(names.session, token, secure, Math.floor(options.sessionTtlMs / 1000)),
    });
  }

  function preSignInToken(context: RequestContext): { csrf: string; cookie: string } {
    const existing = parseCookies(context.head.headers.cookie).get(names.preSignIn);
    const csrf = existing && /^[A-Za-z0-9_-]{43}$/.test(existing) ? existing : randomToken();
    return { csrf, cookie: setCookie(names.preSignIn, csrf, secure, 3600) };
  }

  const sso = options.oidc
    ? createOidcFlow({ settings: options.oidc, store, log, secure, baseUrl })
    : undefined;
  return { options, store, log, secure, names, sso, baseUrl, consolePage, beginSession, preSignInToken };
}
