/**
 * The /console pages. They share the gateway's listener but not its authentication: the
 * console knows only session cookies, and the MCP routes (handled elsewhere) know only
 * X-API-Key. Every state-changing request is a same-origin POST carrying the session's
 * CSRF token.
 */
import type { Logger } from 'pino';
import type { StateStore } from '../accounts/model.ts';
import { hashPassword, passwordProblem } from '../accounts/passwords.ts';
import type { SignInService } from '../accounts/sign-in.ts';
import { invalidPatterns, type KeyScopes, parsePatternField } from '../core/scopes.ts';
import type { HttpResponse, RequestContext } from '../http/engine.ts';
import { mcpServersEntry } from '../keys/client-config.ts';
import { staticAsset } from './assets.ts';
import { html, page, redirect } from './html.ts';
import { createOidcFlow, type OidcSettings } from './oidc.ts';
import { type ConsoleView, consoleBody, registerBody, signInBody } from './pages.ts';
import {
  type ActiveSession,
  clearCookie,
  cookieNames,
  hashToken,
  loadSession,
  parseCookies,
  randomToken,
  setCookie,
  startSession,
  tokensEqual,
} from './session.ts';

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

type Form = URLSearchParams;

const DONE_MESSAGES: Record<string, string> = {
  revoked: 'Key revoked. Gateways stop admitting it within API_KEY_CACHE_TTL_MS.',
  'not-revoked': 'No such key among those you may revoke.',
  'account-added': 'Account added.',
  'account-disabled': 'Account disabled; its sessions ended and its keys stop working.',
  'account-enabled': 'Account enabled.',
  'signed-out': 'Signed out.',
};

const HOST_SHAPE = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;
const DAY_MS = 24 * 60 * 60 * 1000;

export function createConsole(options: ConsoleOptions) {
  const { store, log } = options;
  const secure = options.publicBaseUrl?.startsWith('https://') ?? false;
  const names = cookieNames(secure);

  function baseUrl(host: string | undefined): string {
    if (options.publicBaseUrl) return options.publicBaseUrl.replace(/\/+$/, '');
    return host && HOST_SHAPE.test(host) ? `http://${host}` : options.fallbackBaseUrl;
  }
  const sso = options.oidc
    ? createOidcFlow({ settings: options.oidc, store, log, secure, baseUrl })
    : undefined;

  /** Cross-site POSTs are refused outright, before any token is compared. */
  function sameOrigin(headers: Record<string, string>): boolean {
    const site = headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
    const origin = headers.origin;
    if (origin === undefined) return true;
    // Under Referrer-Policy: no-referrer browsers send "Origin: null" on form posts; the
    // fetch metadata header then says whether the post came from this origin.
    if (origin === 'null') return site === 'same-origin';
    try {
      const expected = options.publicBaseUrl ? new URL(options.publicBaseUrl).host : headers.host;
      return new URL(origin).host === expected;
    } catch {
      return false;
    }
  }

  function forbidden(message: string): HttpResponse {
    return page(
      html`<h1>Refused</h1><p class="error" role="alert">${message}</p><p><a href="/console">Back to the console</a></p>`,
      {
        title: 'Refused',
        status: 403,
      },
    );
  }

  /** Guards the sign-in and registration forms themselves (login CSRF); reused while the cookie lasts. */
  function preSignInToken(context: RequestContext): { csrf: string; cookie: string } {
    const existing = parseCookies(context.head.headers.cookie).get(names.preSignIn);
    const csrf = existing && /^[A-Za-z0-9_-]{43}$/.test(existing) ? existing : randomToken();
    return { csrf, cookie: setCookie(names.preSignIn, csrf, secure, 3600) };
  }

  function signInPage(
    context: RequestContext,
    view: { error?: string; info?: string; email?: string; status?: number; retryAfter?: number },
  ): HttpResponse {
    const { csrf, cookie } = preSignInToken(context);
    const headers: Record<string, string> = { 'set-cookie': cookie };
    if (view.retryAfter) headers['retry-after'] = String(view.retryAfter);
    return page(
      signInBody({
        csrf,
        ...view,
        selfRegistration: options.selfRegistration,
        sso: sso?.displayName,
      }),
      { title: 'Sign in', status: view.status ?? 200, headers },
    );
  }

  async function readForm(context: RequestContext): Promise<Form | undefined> {
    const type = context.head.headers['content-type'] ?? '';
    if (!type.toLowerCase().startsWith('application/x-www-form-urlencoded')) return undefined;
    const body = await context.readBody();
    if (!body.ok) return undefined;
    return new URLSearchParams(body.body.toString('utf8'));
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

  async function handleSignIn(context: RequestContext, form: Form): Promise<HttpResponse> {
    const cookies = parseCookies(context.head.headers.cookie);
    if (!tokensEqual(cookies.get(names.preSignIn), form.get('csrf'))) {
      return signInPage(context, { error: 'The sign-in form expired; please try again.', status: 403 });
    }
    const email = (form.get('email') ?? '').trim();
    const result = await options.signIn.signIn(email, form.get('password') ?? '', context.head.clientAddress);
    if (!result.ok) {
      log.info(
        { email: email.slice(0, 200), reason: result.reason, remote: context.head.clientAddress },
        'console sign-in refused',
      );
      const messages = {
        invalid: 'Wrong email or password.',
        locked: 'Too many failed sign-ins: this account is locked for a while. Try again later.',
        disabled: 'This account is disabled. Ask an administrator.',
        rate_limited: 'Too many sign-in attempts from your address. Wait a minute and try again.',
      } as const;
      const status = result.reason === 'rate_limited' || result.reason === 'locked' ? 429 : 401;
      return signInPage(context, {
        error: messages[result.reason],
        email,
        status,
        ...(result.retryAfterSeconds ? { retryAfter: result.retryAfterSeconds } : {}),
      });
    }
    return beginSession(context, result.account.id, result.account.email);
  }

  /** Ends whatever session the browser had, then issues a fresh token: the only way a session starts. */
  async function beginSession(
    context: RequestContext,
    accountId: string,
    email: string,
  ): Promise<HttpResponse> {
    const previous = parseCookies(context.head.headers.cookie).get(names.session);
    if (previous) await store.deleteSession(hashToken(previous));
    const { token } = await startSession(store, accountId, options.sessionTtlMs);
    log.info({ accountId, email }, 'console sign-in');
    return redirect('/console', {
      'set-cookie': setCookie(names.session, token, secure, Math.floor(options.sessionTtlMs / 1000)),
    });
  }

  async function createKey(
    active: ActiveSession,
    form: Form,
    host: string | undefined,
  ): Promise<HttpResponse> {
    const label = (form.get('label') ?? '').trim();
    const chosen = form.getAll('namespace').filter((name) => options.namespaces.includes(name));
    const publishTopics = parsePatternField(form.get('publishTopics') ?? '');
    const consumeTopics = parsePatternField(form.get('consumeTopics') ?? '');
    const expires = (form.get('expires') ?? '').trim();
    const problems: string[] = [];
    if (!label) problems.push('Give the key a label.');
    if (label.length > 100) problems.push('Use a label of at most 100 characters.');
    if (chosen.length === 0) problems.push('Choose at least one namespace.');
    const badPatterns = invalidPatterns([...publishTopics, ...consumeTopics]);
    if (badPatterns.length > 0) {
      problems.push(
        `Topic patterns may use letters, digits, ".", "_", "-" and "*": fix ${badPatterns.join(', ')}.`,
      );
    }
    let expiresAt: string | null = null;
    if (expires) {
      const day = /^\d{4}-\d{2}-\d{2}$/.test(expires) ? Date.parse(`${expires}T00:00:00Z`) : Number.NaN;
      if (Number.isNaN(day)) problems.push('Give the expiry as a date (YYYY-MM-DD).');
      else if (day + DAY_MS <= Date.now()) problems.push('Choose an expiry date that is today or later.');
      else expiresAt = new Date(day + DAY_MS).toISOString();
    }
    if (problems.length > 0) return consolePage(active, { error: problems.join(' '), status: 400 });
    const scopes: KeyScopes = {
      namespaces: chosen,
      readOnly: form.get('readOnly') === 'on',
      publishTopics,
      consumeTopics,
    };
    const created = await store.createKey({ label, ownerId: active.account.id, scopes, expiresAt });
    log.info({ apiKeyId: created.id, accountId: active.account.id }, 'console created a key');
    const clientConfig = mcpServersEntry(baseUrl(host), chosen, created.key);
    return consolePage(active, { created: { key: created, clientConfig }, status: 201 });
  }

  async function adminAction(active: ActiveSession, path: string, form: Form): Promise<HttpResponse> {
    if (!active.account.admin) return forbidden('Only administrators manage accounts.');
    if (path === '/console/accounts') {
      const email = (form.get('email') ?? '').trim();
      const password = form.get('password') ?? '';
      const problem = !/^[^\s@]+@[^\s@]+$/.test(email)
        ? 'Give a valid email address.'
        : passwordProblem(password);
      if (problem) return consolePage(active, { error: problem, status: 400 });
      if (await store.accountByEmail(email)) {
        return consolePage(active, { error: 'An account with that email already exists.', status: 409 });
      }
      const account = await store.createAccount({
        email,
        passwordHash: await hashPassword(password),
        admin: form.get('admin') === 'on',
      });
      log.info({ accountId: account.id, by: active.account.id }, 'console added an account');
      return redirect('/console?done=account-added');
    }
    const id = form.get('id') ?? '';
    if (id === active.account.id) return forbidden('You cannot disable your own account.');
    const disable = path === '/console/accounts/disable';
    if (!(await store.setAccountDisabled(id, disable))) return forbidden('No such account.');
    if (disable) await store.deleteSessionsOf(id);
    log.info({ accountId: id, by: active.account.id, disabled: disable }, 'console changed an account');
    return redirect(`/console?done=${disable ? 'account-disabled' : 'account-enabled'}`);
  }

  async function register(context: RequestContext, form: Form): Promise<HttpResponse> {
    const csrf = parseCookies(context.head.headers.cookie).get(names.preSignIn);
    if (!tokensEqual(csrf, form.get('csrf')))
      return forbidden('The form expired; reload the page and try again.');
    const email = (form.get('email') ?? '').trim();
    const password = form.get('password') ?? '';
    const problem = !/^[^\s@]+@[^\s@]+$/.test(email)
      ? 'Give a valid email address.'
      : passwordProblem(password);
    const taken = !problem && (await store.accountByEmail(email));
    if (problem || taken) {
      return page(
        registerBody({ csrf: csrf as string, error: problem ?? 'That email cannot be registered.', email }),
        {
          title: 'Create an account',
          status: 400,
        },
      );
    }
    const account = await store.createAccount({
      email,
      passwordHash: await hashPassword(password),
      admin: false,
    });
    return beginSession(context, account.id, account.email);
  }

  return async function handleConsole(context: RequestContext): Promise<HttpResponse> {
    const { head } = context;
    const path = head.path;
    if (head.method === 'GET' || head.method === 'HEAD') {
      const asset = staticAsset(path);
      if (asset) return asset;
    }
    const cookies = parseCookies(head.headers.cookie);
    const active = await loadSession(store, cookies.get(names.session));

    if (head.method === 'GET' || head.method === 'HEAD') {
      if (path === '/console' || path === '/console/') {
        if (!active) return redirect('/console/sign-in');
        const done = new URLSearchParams(head.query).get('done') ?? '';
        return consolePage(active, DONE_MESSAGES[done] ? { info: DONE_MESSAGES[done] } : {});
      }
      if (path === '/console/sign-in') {
        if (active) return redirect('/console');
        const done = new URLSearchParams(head.query).get('done') ?? '';
        return signInPage(context, DONE_MESSAGES[done] ? { info: DONE_MESSAGES[done] } : {});
      }
      if (path === '/console/register' && options.selfRegistration) {
        const { csrf, cookie } = preSignInToken(context);
        return page(registerBody({ csrf }), {
          title: 'Create an account',
          headers: { 'set-cookie': cookie },
        });
      }
      if (sso && path.startsWith('/console/sso/')) return sso.handle(context, beginSession);
      return page(html`<h1>Not found</h1><p><a href="/console">Go to the console</a></p>`, {
        title: 'Not found',
        status: 404,
      });
    }
    if (head.method !== 'POST') {
      return {
        status: 405,
        headers: { allow: 'GET, POST', 'content-type': 'text/plain' },
        body: 'Use GET or POST.',
      };
    }
    if (!sameOrigin(head.headers)) return forbidden('Cross-site form submissions are refused.');
    const form = await readForm(context);
    if (!form) return forbidden('Send the console forms as application/x-www-form-urlencoded.');

    if (path === '/console/sign-in') return handleSignIn(context, form);
    if (path === '/console/register' && options.selfRegistration) return register(context, form);
    if (!active) return redirect('/console/sign-in');
    if (!tokensEqual(active.session.csrfToken, form.get('csrf'))) {
      log.warn(
        { accountId: active.account.id, path },
        'console refused a request without a valid CSRF token',
      );
      return forbidden(
        'This form is stale or did not come from the console (CSRF token mismatch). Reload and try again.',
      );
    }
    if (path === '/console/sign-out') {
      await store.deleteSession(active.idHash);
      return redirect('/console/sign-in?done=signed-out', {
        'set-cookie': clearCookie(names.session, secure),
      });
    }
    if (path === '/console/keys') return createKey(active, form, head.headers.host);
    if (path === '/console/keys/revoke') {
      const id = form.get('id') ?? '';
      const revoked = await store.revokeKey(id, active.account.admin ? undefined : active.account.id);
      if (revoked) log.info({ apiKeyId: id, by: active.account.id }, 'console revoked a key');
      return redirect(`/console?done=${revoked ? 'revoked' : 'not-revoked'}`);
    }
    if (path.startsWith('/console/accounts')) return adminAction(active, path, form);
    return page(html`<h1>Not found</h1>`, { title: 'Not found', status: 404 });
  };
}
