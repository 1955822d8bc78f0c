/**
 * `keys create`: mints a key and prints it once, with a ready setup for every MCP client and
 * every namespace the key may use.
 */
import type { CreatedApiKey, StateStore } from '../accounts/model.ts';
import { UsageProblem } from '../cli/program.ts';
import type { GatewayConfig } from '../config.ts';
import { type KeyLimits, LimitSyntaxError } from '../core/key-limits.ts';
import { isNamespaceName, NAMESPACE_NAMES } from '../core/namespace-names.ts';
import {
  describeScopes,
  FULL_SCOPES,
  invalidPatterns,
  type KeyScopes,
  parsePatternField,
} from '../core/scopes.ts';
import { mcpServersEntry } from './client-config.ts';
import { clientSetups, gatewayBaseUrl, namespaceUrls, renderSetups } from './client-setups.ts';
import { applyLimitFlags, type LimitFlags } from './limits-options.ts';

export interface CreateOptions extends LimitFlags {
  label: string;
  owner?: string;
  namespaces?: string;
  readOnly?: boolean;
  publish?: string;
  consume?: string;
  expires?: string;
  url?: string;
  json?: boolean;
}

export function scopesFrom(options: CreateOptions): KeyScopes {
  const namespaces = options.namespaces === undefined ? ['*'] : parsePatternField(options.namespaces);
  const unknown = namespaces.filter((name) => name !== '*' && !isNamespaceName(name));
  if (unknown.length > 0) {
    throw new UsageProblem(
      `--namespaces: no namespace named ${unknown.join(', ')}; choose from ${NAMESPACE_NAMES.join(', ')}`,
    );
  }
  const publishTopics = options.publish === undefined ? ['*'] : parsePatternField(options.publish);
  const consumeTopics = options.consume === undefined ? ['*'] : parsePatternField(options.consume);
  const bad = invalidPatterns([...publishTopics, ...consumeTopics]);
  if (bad.length > 0) {
    throw new UsageProblem(
      `topic patterns may use letters, digits, ".", "_", "-" and "*": fix ${bad.join(', ')}`,
    );
  }
  return { ...FULL_SCOPES, namespaces, readOnly: options.readOnly ?? false, publishTopics, consumeTopics };
}

export function expiryFrom(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const day = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? Date.parse(`${raw}T00:00:00Z`) : Number.NaN;
  if (Number.isNaN(day)) throw new UsageProblem(`--expires takes a date, YYYY-MM-DD (got "${raw}")`);
  // Works through that whole day (UTC), as in the console.
  const end = day + 24 * 60 * 60 * 1000;
  if (end <= Date.now()) throw new UsageProblem('--expires must be today or later');
  return new Date(end).toISOString();
}

/** Parses the limit flags onto `base`; a malformed one is a usage error naming its accepted form. */
export function limitsFrom(base: KeyLimits, flags: LimitFlags): KeyLimits {
  try {
    return applyLimitFlags(base, flags);
  } catch (error) {
    if (error instanceof LimitSyntaxError) throw new UsageProblem(error.message);
    throw error;
  }
}

export function baseUrlFrom(config: GatewayConfig, url: string | undefined): string {
  if (url !== undefined && !/^https?:\/\/[^\s/]+/.test(url)) {
    throw new UsageProblem(`--url takes the gateway's base URL, like https://mcp.example.com (got "${url}")`);
  }
  return gatewayBaseUrl(config, url);
}

/** The JSON fields every printed secret carries: the secret and what to paste it into. */
export function secretOutput(created: CreatedApiKey, baseUrl: string) {
  const urls = namespaceUrls(baseUrl, created.scopes);
  return {
    key: created.key,
    urls,
    ...mcpServersEntry(baseUrl, Object.keys(urls), created.key),
    setups: clientSetups(urls, created.key),
  };
}

export async function createKey(store: StateStore, config: GatewayConfig, options: CreateOptions) {
  const label = options.label.trim();
  if (!label) throw new UsageProblem('--label must not be empty');
  // Everything is checked before the store changes, so a malformed option changes nothing.
  const scopes = scopesFrom(options);
  const expiresAt = expiryFrom(options.expires);
  const limits = limitsFrom({}, options);
  const baseUrl = baseUrlFrom(config, options.url);
  const ownerEmail = options.owner?.trim();
  const owner = !ownerEmail
    ? await store.operatorAccount()
    : ((await store.accountByEmail(ownerEmail)) ??
      // An owner named here that has no account gets one that owns keys but cannot sign in.
      (await store.createAccount({ email: ownerEmail, passwordHash: null, admin: false })));
  const created = await store.createKey({ label, ownerId: owner.id, scopes, expiresAt, limits });
  const secret = secretOutput(created, baseUrl);
  if (options.json) {
    const { id, owner: ownerEmailOut, scopes: s, limits: l, expiresAt: e } = created;
    console.log(
      JSON.stringify({ id, label, owner: ownerEmailOut, scopes: s, limits: l, expiresAt: e, ...secret }),
    );
    return;
  }
  console.log(
    `Created key ${created.id} (${created.label}) for ${created.owner}: ${describeScopes(created.scopes)}. It is shown only this once:\n\n  ${created.key}\n`,
  );
  console.log(`${renderSetups(secret.setups)}\n`);
}
