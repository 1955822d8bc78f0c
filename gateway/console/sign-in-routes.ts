/** Signing in (password or single sign-on), creating an account, and signing out. */
import { hashPassword, passwordProblem } from '../accounts/passwords.ts';
import type { HttpResponse, RequestContext } from '../http/engine.ts';
import { page, redirect } from './html.ts';
import { type ConsoleKit, doneNotice, forbidden } from './kit.ts';
import { registerBody, signInBody } from './pages.ts';
import type { ConsoleRoute, PublicRequest } from './route.ts';
import { clearCookie, parseCookies, tokensEqual } from './session.ts';

interface SignInPageView {
  error?: string;
  info?: string;
  email?: string;
  status?: number;
  retryAfter?: number;
}

const REFUSALS = {
  invalid: 'Wrong email or password.',
  locked: 'Too many failed sign-ins: this account is locked for a while. Try again later.',
  disabled: 'This account is disabled. Ask an administrator.',
  rate_limited: 'Too many sign-in attempts from your address. Wait a minute and try again.',
} as const;

/** The problem with a new account's email and password, if any. */
export function newAccountProblem(email: string, password: string): string | undefined {
  return !/^[^\s@]+@[^\s@]+$/.test(email)
    ? 'Give a valid email address.'
    : (passwordProblem(password) ?? undefined);
}

function signInPage(kit: ConsoleKit, context: RequestContext, view: SignInPageView): HttpResponse {
  const { csrf, cookie } = kit.preSignInToken(context);
  const headers: Record<string, string> = { 'set-cookie': cookie };
  if (view.retryAfter) headers['retry-after'] = String(view.retryAfter);
  const body = signInBody({
    csrf,
    ...view,
    selfRegistration: kit.options.selfRegistration,
    sso: kit.sso?.displayName,
  });
  return page(body, { title: 'Sign in', status: view.status ?? 200, headers });
}

async function signIn(kit: ConsoleKit, { context, fields: form }: PublicRequest): Promise<HttpResponse> {
  const cookies = parseCookies(context.head.headers.cookie);
  if (!tokensEqual(cookies.get(kit.names.preSignIn), form.get('csrf'))) {
    return signInPage(kit, context, { error: 'The sign-in form expired; please try again.', status: 403 });
  }
  const email = (form.get('email') ?? '').trim();
  const result = await kit.options.signIn.signIn(
    email,
    form.get('password') ?? '',
    context.head.clientAddress,
  );
  if (result.ok) return kit.beginSession(context, result.account.id, result.account.email);
  kit.log.info(
    { email: email.slice(0, 200), reason: result.reason, remote: context.head.clientAddress },
    'console sign-in refused',
  );
  return signInPage(kit, context, {
    error: REFUSALS[result.reason],
    email,
    status: result.reason === 'rate_limited' || result.reason === 'locked' ? 429 : 401,
    ...(result.retryAfterSeconds ? { retryAfter: result.retryAfterSeconds } : {}),
  });
}

async function register(kit: ConsoleKit, { context, fields: form }: PublicRequest): Promise<HttpResponse> {
  const csrf = parseCookies(context.head.headers.cookie).get(kit.names.preSignIn);
  if (!tokensEqual(csrf, form.get('csrf')))
    return forbidden('The form expired; reload the page and try again.');
  const email = (form.get('email') ?? '').trim();
  const password = form.get('password') ?? '';
  const problem = newAccountProblem(email, password);
  const taken = !problem && (await kit.store.accountByEmail(email));
  if (problem || taken) {
    const error = problem ?? 'That email cannot be registered.';
    return page(registerBody({ csrf: csrf as string, error, email }), {
      title: 'Create an account',
      status: 400,
    });
  }
  const passwordHash = await hashPassword(password);
  const account = await kit.store.createAccount({ email, passwordHash, admin: false });
  return kit.beginSession(context, account.id, account.email);
}

export function signInRoutes(kit: ConsoleKit): ConsoleRoute[] {
  const { options, store, names } = kit;
  const routes: ConsoleRoute[] = [
    {
      method: 'GET',
      path: '/console/sign-in',
      access: 'public',
      handle: async ({ context, active }) =>
        active ? redirect('/console') : signInPage(kit, context, doneNotice(context.head.query)),
    },
    { method: 'POST', path: '/console/sign-in', access: 'public', handle: (request) => signIn(kit, request) },
    {
      method: 'POST',
      path: '/console/sign-out',
      access: 'session',
      handle: async ({ active }) => {
        await store.deleteSession(active.idHash);
        return redirect('/console/sign-in?done=signed-out', {
          'set-cookie': clearCookie(names.session, kit.secure),
        });
      },
    },
  ];
  if (options.selfRegistration) {
    routes.push(
      {
        method: 'GET',
        path: '/console/register',
        access: 'public',
        handle: async ({ context }) => {
          const { csrf, cookie } = kit.preSignInToken(context);
          return page(registerBody({ csrf }), {
            title: 'Create an account',
            headers: { 'set-cookie': cookie },
          });
        },
      },
      {
        method: 'POST',
        path: '/console/register',
        access: 'public',
        handle: (request) => register(kit, request),
      },
    );
  }
  const sso = kit.sso;
  if (sso) {
    routes.push({
      method: 'GET',
      path: '/console/sso/*',
      access: 'public',
      handle: ({ context }) => sso.handle(context, kit.beginSession),
    });
  }
  return routes;
}
