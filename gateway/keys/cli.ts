/**
 * `npm run keys -- create --label L [--owner EMAIL] [scopes] [limits] [--json] | list [--json]
 *  | show ID [--json] | update ID [limits] | revoke ID`
 * The key is printed once, at creation; the store keeps only its hash. Works on whichever
 * store the gateway uses (SQLite in DATA_DIR, or Postgres with DATABASE_URL).
 */
import { parseArgs } from 'node:util';
import type { StateStore } from '../accounts/model.ts';
import { openStateStore } from '../accounts/open.ts';
import {
  describeScopes,
  FULL_SCOPES,
  invalidPatterns,
  type KeyScopes,
  parsePatternField,
} from '../accounts/scopes.ts';
import { ConfigError, type GatewayConfig, loadGatewayConfig } from '../config.ts';
import { type KeyLimits, LimitSyntaxError } from '../limits/policy.ts';
import { utcDay } from '../limits/quotas.ts';
import { NAMESPACE_FACTORIES } from '../namespaces/registry.ts';
import { mcpServersEntry } from './client-config.ts';
import {
  applyLimitFlags,
  checkLimitSyntax,
  hasLimitFlags,
  type LimitFlags,
  limitColumns,
  showKey,
} from './limits-options.ts';

const USAGE = `usage:
  npm run keys -- create --label LABEL [--owner EMAIL] [--namespaces a,b] [--read-only]
                         [--publish PATTERNS] [--consume PATTERNS] [--expires YYYY-MM-DD] [LIMITS] [--json]
  npm run keys -- update KEY_ID LIMITS
  npm run keys -- show KEY_ID [--json]
  npm run keys -- list [--json]
  npm run keys -- revoke KEY_ID
LIMITS: --rate N/s|N/min|none  --burst N  --quota name=N/day,…|none  --max-polls N|none
Without --owner a key belongs to the operator account; without scope options it may do everything.
Without --rate a key gets RATE_LIMIT_DEFAULT (if set); --rate none lifts every rate limit for it.`;

function fail(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

function scopesFrom(values: {
  namespaces?: string | undefined;
  'read-only': boolean;
  publish?: string | undefined;
  consume?: string | undefined;
}): KeyScopes {
  const namespaces = values.namespaces === undefined ? ['*'] : parsePatternField(values.namespaces);
  const unknown = namespaces.filter((name) => name !== '*' && !(name in NAMESPACE_FACTORIES));
  if (unknown.length > 0) fail(`--namespaces: no namespace named ${unknown.join(', ')}`);
  const publishTopics = values.publish === undefined ? ['*'] : parsePatternField(values.publish);
  const consumeTopics = values.consume === undefined ? ['*'] : parsePatternField(values.consume);
  const bad = invalidPatterns([...publishTopics, ...consumeTopics]);
  if (bad.length > 0)
    fail(`topic patterns may use letters, digits, ".", "_", "-" and "*": fix ${bad.join(', ')}`);
  return { ...FULL_SCOPES, namespaces, readOnly: values['read-only'], publishTopics, consumeTopics };
}

function expiryFrom(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const day = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? Date.parse(`${raw}T00:00:00Z`) : Number.NaN;
  if (Number.isNaN(day)) fail('--expires takes a date, YYYY-MM-DD');
  // Works through that whole day (UTC), as in the console.
  const end = day + 24 * 60 * 60 * 1000;
  if (end <= Date.now()) fail('--expires must be today or later');
  return new Date(end).toISOString();
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      label: { type: 'string' },
      owner: { type: 'string' },
      namespaces: { type: 'string' },
      'read-only': { type: 'boolean', default: false },
      publish: { type: 'string' },
      consume: { type: 'string' },
      expires: { type: 'string' },
      rate: { type: 'string' },
      burst: { type: 'string' },
      quota: { type: 'string' },
      'max-polls': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const [command, ...rest] = positionals;
  if (!command || !['create', 'list', 'revoke', 'update', 'show'].includes(command)) {
    fail(command ? `unknown command: ${command}` : 'missing command');
  }
  let config: ReturnType<typeof loadGatewayConfig>;
  try {
    config = loadGatewayConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
  const label = values.label?.trim();
  if (command === 'create' && !label) fail('create needs --label');
  const scopes = command === 'create' ? scopesFrom(values) : FULL_SCOPES;
  const expiresAt = command === 'create' ? expiryFrom(values.expires) : null;
  // Checked before the store opens, so a malformed flag changes nothing.
  const limits = command === 'create' ? limitsFrom({}, values) : {};
  if (command === 'update' && !hasLimitFlags(values))
    fail('update needs --rate, --burst, --quota or --max-polls');
  if ((command === 'update' || command === 'show') && !rest[0]) {
    fail(`${command} needs a key id (see \`npm run keys -- list\`)`);
  }
  if (command === 'update') {
    try {
      checkLimitSyntax(values);
    } catch (error) {
      if (error instanceof LimitSyntaxError) fail(error.message);
      throw error;
    }
  }
  const store = await openStateStore(config);
  try {
    if (command === 'update' || command === 'show') {
      await (command === 'update'
        ? updateKey(store, rest[0] as string, values)
        : showKeyCommand(store, rest[0] as string, config, values.json));
      return;
    }
    if (command === 'create') {
      const ownerEmail = values.owner?.trim();
      const owner = !ownerEmail
        ? await store.operatorAccount()
        : ((await store.accountByEmail(ownerEmail)) ??
          // An owner named here that has no account gets one that owns keys but cannot sign in.
          (await store.createAccount({ email: ownerEmail, passwordHash: null, admin: false })));
      const created = await store.createKey({
        label: label as string,
        ownerId: owner.id,
        scopes,
        expiresAt,
        limits,
      });
      const baseUrl = config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${config.PORT}`;
      const namespaces = Object.keys(NAMESPACE_FACTORIES).filter(
        (name) => scopes.namespaces.includes('*') || scopes.namespaces.includes(name),
      );
      const clientConfig = mcpServersEntry(baseUrl, namespaces, created.key);
      if (values.json) {
        console.log(
          JSON.stringify({
            key: created.key,
            id: created.id,
            label: created.label,
            owner: created.owner,
            scopes: created.scopes,
            limits: created.limits,
            expiresAt: created.expiresAt,
            ...clientConfig,
          }),
        );
        return;
      }
      console.log(
        `Created key ${created.id} (${created.label}) for ${created.owner}: ${describeScopes(created.scopes)}. It is shown only this once:\n\n  ${created.key}\n`,
      );
      console.log('Client configuration:\n');
      console.log(JSON.stringify(clientConfig, null, 2));
      return;
    }
    if (command === 'list') {
      const records = await store.listKeys();
      if (values.json) {
        console.log(JSON.stringify(records));
        return;
      }
      if (records.length === 0) {
        console.log('no keys');
        return;
      }
      console.table(
        records.map((r) => ({
          id: r.id,
          label: r.label,
          owner: r.owner,
          scopes: describeScopes(r.scopes),
          ...limitColumns(r.limits, config.rateLimitDefault),
          created: r.createdAt,
          lastUsed: r.lastUsedAt ?? '',
          expires: r.expiresAt ?? '',
          revoked: r.revokedAt ?? '',
        })),
      );
      return;
    }
    const id = rest[0];
    if (!id) fail('revoke needs a key id (see `npm run keys -- list`)');
    if (!(await store.revokeKey(id))) {
      console.error(`no key with id ${id}`);
      process.exitCode = 1;
      return;
    }
    console.log(`revoked ${id}; gateways stop admitting it within API_KEY_CACHE_TTL_MS (default 5 s)`);
  } finally {
    await store.close();
  }
}

/** Parses the limit flags onto `base`; a malformed one stops here with the accepted form. */
function limitsFrom(base: KeyLimits, flags: LimitFlags): KeyLimits {
  try {
    return applyLimitFlags(base, flags);
  } catch (error) {
    if (error instanceof LimitSyntaxError) fail(error.message);
    throw error;
  }
}

async function updateKey(store: StateStore, id: string, flags: LimitFlags): Promise<void> {
  const record = await store.keyById(id);
  if (!record) {
    console.error(`no key with id ${id}; nothing was changed (see \`npm run keys -- list\`)`);
    process.exitCode = 1;
    return;
  }
  const updated = await store.setKeyLimits(id, limitsFrom(record.limits, flags));
  if (!updated) {
    console.error(`no key with id ${id}; nothing was changed`);
    process.exitCode = 1;
    return;
  }
  const { rate, quotas, maxPolls } = limitColumns(updated.limits, loadGatewayConfig().rateLimitDefault);
  console.log(
    `updated ${id}: rate ${rate}, quotas ${quotas}, max polls ${maxPolls}; gateways apply it within API_KEY_CACHE_TTL_MS (default 5 s)`,
  );
}

async function showKeyCommand(
  store: StateStore,
  id: string,
  config: GatewayConfig,
  json: boolean,
): Promise<void> {
  const record = await store.keyById(id);
  if (!record) {
    console.error(`no key with id ${id} (see \`npm run keys -- list\`)`);
    process.exitCode = 1;
    return;
  }
  const day = utcDay();
  const usage = await store.quotaUsage(id, day);
  if (json) {
    const { id: keyId, label, owner, limits, revokedAt } = record;
    console.log(JSON.stringify({ id: keyId, label, owner, limits, revokedAt, day, usage }));
    return;
  }
  console.log(showKey(record, usage, day, config.rateLimitDefault));
}

await main();
