/** Account management on the keys page, for administrators: add an account, disable or enable one. */
import { hashPassword } from '../accounts/passwords.ts';
import type { HttpResponse } from '../http/engine.ts';
import { redirect } from './html.ts';
import { type ConsoleKit, forbidden } from './kit.ts';
import type { ConsoleRoute, SessionRequest } from './route.ts';
import { newAccountProblem } from './sign-in-routes.ts';

export function accountsRoutes(kit: ConsoleKit): ConsoleRoute[] {
  const { store, log } = kit;

  /** Only administrators reach the handler; anyone else is refused. */
  const adminOnly =
    (handle: (request: SessionRequest) => Promise<HttpResponse>) =>
    async (request: SessionRequest): Promise<HttpResponse> =>
      request.active.account.admin ? handle(request) : forbidden('Only administrators manage accounts.');

  async function addAccount({ active, fields: form }: SessionRequest): Promise<HttpResponse> {
    const email = (form.get('email') ?? '').trim();
    const password = form.get('password') ?? '';
    const problem = newAccountProblem(email, password);
    if (problem) return kit.consolePage(active, { error: problem, status: 400 });
    if (await store.accountByEmail(email)) {
      return kit.consolePage(active, { error: 'An account with that email already exists.', status: 409 });
    }
    const account = await store.createAccount({
      email,
      passwordHash: await hashPassword(password),
      admin: form.get('admin') === 'on',
    });
    log.info({ accountId: account.id, by: active.account.id }, 'console added an account');
    return redirect('/console?done=account-added');
  }

  const setDisabled =
    (disable: boolean) =>
    async ({ active, fields: form }: SessionRequest): Promise<HttpResponse> => {
      const id = form.get('id') ?? '';
      if (id === active.account.id) return forbidden('You cannot disable your own account.');
      if (!(await store.setAccountDisabled(id, disable))) return forbidden('No such account.');
      // A disabled account's open sessions end now, not when their cookies expire.
      if (disable) await store.deleteSessionsOf(id);
      log.info({ accountId: id, by: active.account.id, disabled: disable }, 'console changed an account');
      return redirect(`/console?done=${disable ? 'account-disabled' : 'account-enabled'}`);
    };

  return [
    { method: 'POST', path: '/console/accounts', access: 'session', handle: adminOnly(addAccount) },
    {
      method: 'POST',
      path: '/console/accounts/disable',
      access: 'session',
      handle: adminOnly(setDisabled(true)),
    },
    {
      method: 'POST',
      path: '/console/accounts/enable',
      access: 'session',
      handle: adminOnly(setDisabled(false)),
    },
  ];
}
