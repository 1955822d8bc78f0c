/**
 * `npm run keys -- create --label L [--owner EMAIL] [scopes] [--json] | list [--json] | revoke ID`
 * The key is printed once, at creation; the store keeps only its hash. Works on whichever
 * store the gateway uses (SQLite in DATA_DIR, or Postgres with DATABASE_URL).
 */
import { parseArgs } from 'node:util';
import { openStateStore } from '../accounts/open.ts';
import {
  describeScopes,
  FULL_SCOPES,
  invalidPatterns,
  type KeyScopes,
  parsePatternField,
} from '../accounts/scopes.ts';
import { ConfigError, loadGatewayConfig } from '../config.ts';
import { NAMESPACE_FACTORIES } from '../namespaces/registry.ts';
import { mcpServersEntry } from './client-config.ts';

const USAGE = `usage:
  npm run keys -- create --label LABEL [--owner EMAIL] [--namespaces a,b] [--read-only]
                         [--publish PATTERNS] [--consume PATTERNS] [--expires YYYY-MM-DD] [--json]
  npm run keys -- list [--json]
  npm run keys -- revoke KEY_ID
Without --owner a key belongs to the operator account; without scope options it may do everything.`;

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
      json: { type: 'boolean', default: false },
    },
  });
  const [command, ...rest] = positionals;
  if (!command || !['create', 'list', 'revoke'].includes(command)) {
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
  const store = await openStateStore(config);
  try {
    if (command === 'create') {
      const ownerEmail = values.owner?.trim();
      const owner = !ownerEmail
        ? await store.operatorAccount()
        : ((await store.accountByEmail(ownerEmail)) ??
          // An owner named here that has no account gets one that owns keys but cannot sign in.
          (await store.createAccount({ email: ownerEmail, passwordHash: null, admin: false })));
      const created = await store.createKey({ label: label as string, ownerId: owner.id, scopes, expiresAt });
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

await main();
