/**
 * The /console pages. They share the gateway's listener but not its authentication: the
 * console knows only session cookies, and the MCP routes (handled elsewhere) know only
 * X-API-Key. Every state-changing request is a same-origin POST carrying a CSRF token: the
 * session's once signed in, the pre-sign-in cookie's on the sign-in and registration forms.
 * Each page lists its own routes; this router finds one and applies those rules.
 */
import type { HttpResponse, RequestContext } from '../http/engine.ts';
import { accountsRoutes } from './accounts-routes.ts';
import { staticAsset } from './assets.ts';
import { html, page, redirect } from './html.ts';
import { keysRoutes } from './keys-routes.ts';
import { type ConsoleOptions, createKit, forbidden } from './kit.ts';
import type { ConsoleRoute } from './route.ts';
import { loadSession, parseCookies, tokensEqual } from './session.ts';
import { signInRoutes } from './sign-in-routes.ts';

export type { ConsoleOptions } from './kit.ts';

/** Cross-site POSTs are refused outright, before any token is compared. */
function sameOrigin(headers: Record<string, string>, publicBaseUrl: string | undefined): boolean {
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = headers.origin;
  if (origin === undefined) return true;
  // Under Referrer-Policy: no-referrer browsers send "Origin: null" on form posts; the
  // fetch metadata header then says whether the post came from this origin.
  if (origin === 'null') return site === 'same-origin';
  try {
    const expected = publicBaseUrl ? new URL(publicBaseUrl).host : headers.host;
    return new URL(origin).host === expected;
  } catch {
    return false;
  }
}

async function readForm(context: RequestContext): Promise<URLSearchParams | undefined> {
  const type = context.head.headers['content-type'] ?? '';
  if (!type.toLowerCase().startsWith('application/x-www-form-urlencoded')) return undefined;
  const body = await context.readBody();
  if (!body.ok) return undefined;
  return new URLSearchParams(body.body.toString('utf8'));
}

function notFound(method: 'GET' | 'POST'): HttpResponse {
  const body =
    method === 'GET'
      ? html`<h1>Not found</h1><p><a href="/console">Go to the console</a></p>`
      : html`<h1>Not found</h1>`;
  return page(body, { title: 'Not found', status: 404 });
}

const METHOD_NOT_ALLOWED: HttpResponse = {
  status: 405,
  headers: { allow: 'GET, POST', 'content-type': 'text/plain' },
  body: 'Use GET or POST.',
};

export function createConsole(options: ConsoleOptions) {
  const kit = createKit(options);
  const routes = [...signInRoutes(kit), ...keysRoutes(kit), ...accountsRoutes(kit)];
  const find = (method: 'GET' | 'POST', path: string): ConsoleRoute | undefined =>
    routes.find(
      (route) =>
        route.method === method &&
        (route.path.endsWith('*') ? path.startsWith(route.path.slice(0, -1)) : path === route.path),
    );

  return async function handleConsole(context: RequestContext): Promise<HttpResponse> {
    const { head } = context;
    const read = head.method === 'GET' || head.method === 'HEAD';
    if (read) {
      const asset = staticAsset(head.path);
      if (asset) return asset;
    } else if (head.method !== 'POST') return METHOD_NOT_ALLOWED;
    const method = read ? 'GET' : 'POST';
    const active = await loadSession(options.store, parseCookies(head.headers.cookie).get(kit.names.session));
    let fields = new URLSearchParams(head.query);
    if (method === 'POST') {
      if (!sameOrigin(head.headers, options.publicBaseUrl))
        return forbidden('Cross-site form submissions are refused.');
      const form = await readForm(context);
      if (!form) return forbidden('Send the console forms as application/x-www-form-urlencoded.');
      fields = form;
    }
    const route = find(method, head.path);
    if (!route) return notFound(method);
    if (route.access === 'public') return route.handle({ context, active, fields });
    if (!active) return redirect('/console/sign-in');
    if (method === 'POST' && !tokensEqual(active.session.csrfToken, fields.get('csrf'))) {
      options.log.warn(
        { accountId: active.account.id, path: head.path },
        'console refused a request without a valid CSRF token',
      );
      return forbidden(
        'This form is stale or did not come from the console (CSRF token mismatch). Reload and try again.',
      );
    }
    return route.handle({ context, active, fields });
  };
}
