/** The keys page: the signed-in account's keys (an admin's: everyone's), creating and revoking them. */
import { invalidPatterns, type KeyScopes, parsePatternField } from '../core/scopes.ts';
import type { HttpResponse } from '../http/engine.ts';
import { mcpServersEntry } from '../keys/client-config.ts';
import { redirect } from './html.ts';
import { type ConsoleKit, doneNotice } from './kit.ts';
import type { ConsoleRoute, SessionRequest } from './route.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The end of the chosen UTC day, or the problem with the date. */
function expiryOf(expires: string): { at: string | null } | { problem: string } {
  if (!expires) return { at: null };
  const day = /^\d{4}-\d{2}-\d{2}$/.test(expires) ? Date.parse(`${expires}T00:00:00Z`) : Number.NaN;
  if (Number.isNaN(day)) return { problem: 'Give the expiry as a date (YYYY-MM-DD).' };
  if (day + DAY_MS <= Date.now()) return { problem: 'Choose an expiry date that is today or later.' };
  return { at: new Date(day + DAY_MS).toISOString() };
}

export function keysRoutes(kit: ConsoleKit): ConsoleRoute[] {
  const { options, store, log } = kit;

  async function createKey({ context, active, fields: form }: SessionRequest): Promise<HttpResponse> {
    const label = (form.get('label') ?? '').trim();
    const chosen = form.getAll('namespace').filter((name) => options.namespaces.includes(name));
    const publishTopics = parsePatternField(form.get('publishTopics') ?? '');
    const consumeTopics = parsePatternField(form.get('consumeTopics') ?? '');
    const expiry = expiryOf((form.get('expires') ?? '').trim());
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
    if ('problem' in expiry) problems.push(expiry.problem);
    if (problems.length > 0 || 'problem' in expiry) {
      return kit.consolePage(active, { error: problems.join(' '), status: 400 });
    }
    const scopes: KeyScopes = {
      namespaces: chosen,
      readOnly: form.get('readOnly') === 'on',
      publishTopics,
      consumeTopics,
    };
    const ownerId = active.account.id;
    const created = await store.createKey({ label, ownerId, scopes, expiresAt: expiry.at });
    log.info({ apiKeyId: created.id, accountId: ownerId }, 'console created a key');
    const clientConfig = mcpServersEntry(kit.baseUrl(context.head.headers.host), chosen, created.key);
    return kit.consolePage(active, { created: { key: created, clientConfig }, status: 201 });
  }

  async function revokeKey({ active, fields: form }: SessionRequest): Promise<HttpResponse> {
    const id = form.get('id') ?? '';
    // An admin may revoke any key; anyone else only their own.
    const revoked = await store.revokeKey(id, active.account.admin ? undefined : active.account.id);
    if (revoked) log.info({ apiKeyId: id, by: active.account.id }, 'console revoked a key');
    return redirect(`/console?done=${revoked ? 'revoked' : 'not-revoked'}`);
  }

  const home = async ({ context, active }: SessionRequest) =>
    kit.consolePage(active, doneNotice(context.head.query));
  return [
    { method: 'GET', path: '/console', access: 'session', handle: home },
    { method: 'GET', path: '/console/', access: 'session', handle: home },
    { method: 'POST', path: '/console/keys', access: 'session', handle: createKey },
    { method: 'POST', path: '/console/keys/revoke', access: 'session', handle: revokeKey },
  ];
}
