/** `keys list`, `show`, `update` and `revoke`: reading and changing keys that exist. */
import type { StateStore } from '../accounts/model.ts';
import { CliFailure, printList, UsageProblem } from '../cli/program.ts';
import type { GatewayConfig } from '../config.ts';
import { describeScopes } from '../core/scopes.ts';
import { utcDay } from '../limits/quotas.ts';
import { limitsFrom } from './create-command.ts';
import { checkLimitSyntax, hasLimitFlags, type LimitFlags, limitColumns, showKey } from './limits-options.ts';

function noSuchKey(id: string): CliFailure {
  return new CliFailure(`no key with id ${id}; nothing was changed (see \`npm run keys -- list\`)`);
}

export async function listKeys(store: StateStore, config: GatewayConfig, options: { json?: boolean }) {
  printList(await store.listKeys(), options, 'no keys', (r) => ({
    id: r.id,
    label: r.label,
    owner: r.owner,
    scopes: describeScopes(r.scopes),
    ...limitColumns(r.limits, config.rateLimitDefault),
    created: r.createdAt,
    lastUsed: r.lastUsedAt ?? '',
    expires: r.expiresAt ?? '',
    revoked: r.revokedAt ?? '',
  }));
}

export async function showKeyCommand(
  store: StateStore,
  config: GatewayConfig,
  id: string,
  options: { json?: boolean },
) {
  const record = await store.keyById(id);
  if (!record) throw new CliFailure(`no key with id ${id} (see \`npm run keys -- list\`)`);
  const day = utcDay();
  const usage = await store.quotaUsage(id, day);
  if (options.json) {
    console.log(JSON.stringify({ ...record, day, usage }));
    return;
  }
  console.log(showKey(record, usage, day, config.rateLimitDefault));
}

/** Checks every flag's form before the store opens, so a malformed one changes nothing. */
export function checkUpdateFlags(flags: LimitFlags): void {
  if (!hasLimitFlags(flags)) {
    throw new UsageProblem('update needs at least one of --rate, --burst, --quota or --max-polls');
  }
  try {
    checkLimitSyntax(flags);
  } catch (error) {
    throw new UsageProblem((error as Error).message);
  }
}

export async function updateKey(
  store: StateStore,
  config: GatewayConfig,
  id: string,
  flags: LimitFlags & { json?: boolean },
) {
  const record = await store.keyById(id);
  if (!record) throw noSuchKey(id);
  const updated = await store.setKeyLimits(id, limitsFrom(record.limits, flags));
  if (!updated) throw noSuchKey(id);
  if (flags.json) {
    console.log(JSON.stringify(updated));
    return;
  }
  const { rate, quotas, maxPolls } = limitColumns(updated.limits, config.rateLimitDefault);
  console.log(
    `updated ${id}: rate ${rate}, quotas ${quotas}, max polls ${maxPolls}; gateways apply it within API_KEY_CACHE_TTL_MS (default 5 s)`,
  );
}

export async function revokeKey(store: StateStore, id: string, options: { json?: boolean }) {
  const record = await store.keyById(id);
  if (!record) throw noSuchKey(id);
  const already = record.revokedAt;
  if (!already) await store.revokeKey(id);
  const revokedAt = already ?? (await store.keyById(id))?.revokedAt ?? null;
  if (options.json) {
    console.log(JSON.stringify({ id, revokedAt, alreadyRevoked: already !== null }));
    return;
  }
  console.log(
    already
      ? `${id} was already revoked at ${already}; nothing changed`
      : `revoked ${id}; gateways stop admitting it within API_KEY_CACHE_TTL_MS (default 5 s)`,
  );
}
