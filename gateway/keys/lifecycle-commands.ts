/**
 * `keys rotate` (a new secret for the same key id, the old one admitted through a grace
 * period) and `keys prune` (deletes keys that can never work again).
 */
import type { ApiKeyRecord, StateStore } from '../accounts/model.ts';
import { CliFailure, UsageProblem } from '../cli/program.ts';
import type { GatewayConfig } from '../config.ts';
import { renderSetups } from './client-setups.ts';
import { baseUrlFrom, secretOutput } from './create-command.ts';

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000 } as const;
/** A rotation is a hand-over, not a second key: a longer overlap is a new key's job. */
const MAX_GRACE_MS = 7 * 24 * UNIT_MS.h;

/** `60s`, `15m`, `2h`; `0` (no overlap) needs no unit. */
export function parseGrace(raw: string): number {
  if (raw === '0') return 0;
  const match = /^(\d+)(s|m|h)$/.exec(raw.trim());
  if (!match) {
    throw new UsageProblem(
      `--grace: "${raw}" is not a duration; use a whole number with s, m or h (e.g. 60s, 15m, 2h), or 0`,
    );
  }
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  if (ms > MAX_GRACE_MS)
    throw new UsageProblem('--grace: at most 168h (7 days); create a second key instead');
  return ms;
}

export interface RotateOptions {
  grace: string;
  url?: string;
  json?: boolean;
}

function refuseRotation(record: ApiKeyRecord | undefined, id: string): void {
  if (!record)
    throw new CliFailure(`no key with id ${id}; nothing was changed (see \`npm run keys -- list\`)`);
  if (record.revokedAt) {
    throw new CliFailure(
      `key ${id} was revoked at ${record.revokedAt} and cannot be rotated; nothing was changed (create a new key)`,
    );
  }
  if (record.expiresAt && Date.parse(record.expiresAt) <= Date.now()) {
    throw new CliFailure(
      `key ${id} expired at ${record.expiresAt} and cannot be rotated; nothing was changed (create a new key)`,
    );
  }
}

export async function rotateKey(
  store: StateStore,
  config: GatewayConfig,
  id: string,
  options: RotateOptions,
) {
  const graceMs = parseGrace(options.grace);
  const baseUrl = baseUrlFrom(config, options.url);
  refuseRotation(await store.keyById(id), id);
  const graceUntil = graceMs === 0 ? null : new Date(Date.now() + graceMs).toISOString();
  const rotated = await store.rotateKey(id, graceUntil);
  // Revoked between the check and the rotation: the store changed nothing.
  if (!rotated) throw new CliFailure(`key ${id} is no longer live; nothing was changed`);
  const secret = secretOutput(rotated, baseUrl);
  if (options.json) {
    const { id: keyId, label, owner, scopes, limits, expiresAt } = rotated;
    const fields = {
      id: keyId,
      label,
      owner,
      scopes,
      limits,
      expiresAt,
      previousSecretValidUntil: graceUntil,
    };
    console.log(JSON.stringify({ ...fields, ...secret }));
    return;
  }
  const previous = graceUntil
    ? `The previous secret keeps working until ${graceUntil} (${options.grace}), then stops.`
    : 'The previous secret stops now.';
  console.log(
    `Rotated key ${rotated.id} (${rotated.label}). Its new secret works now and is shown only this once:\n\n  ${rotated.key}\n\n${previous} Gateways that admitted it moments ago may keep admitting it for up to API_KEY_CACHE_TTL_MS (default 5 s) longer.\n`,
  );
  console.log(`${renderSetups(secret.setups)}\n`);
}

function prunable(now: number) {
  return (record: ApiKeyRecord) =>
    record.revokedAt !== null || (record.expiresAt !== null && Date.parse(record.expiresAt) <= now);
}

export async function pruneKeys(store: StateStore, options: { dryRun?: boolean; json?: boolean }) {
  const now = new Date();
  const removed = options.dryRun
    ? (await store.listKeys()).filter(prunable(now.getTime()))
    : await store.pruneKeys(now);
  if (options.json) {
    console.log(JSON.stringify({ dryRun: options.dryRun ?? false, removed }));
    return;
  }
  if (removed.length === 0) {
    console.log('nothing to prune: no revoked or expired keys');
    return;
  }
  const verb = options.dryRun ? 'would remove' : 'removed';
  console.log(`${verb} ${removed.length} key${removed.length === 1 ? '' : 's'}:`);
  for (const record of removed) {
    const why = record.revokedAt ? `revoked ${record.revokedAt}` : `expired ${record.expiresAt}`;
    console.log(`  ${record.id}  ${record.label} (owner ${record.owner}), ${why}`);
  }
}
